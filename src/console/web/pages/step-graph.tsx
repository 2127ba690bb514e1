import { type GraphEdge, type GraphNode, NODE, START, type StepView, workflowGraph } from "../lib/graph.ts";

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** What a step's node says under its name: its function, and its condition or loop when it has one. */
function detail(step: StepView): string {
  if (step.mode === "conditional") return `if output contains “${step.condition ?? ""}”`;
  if (step.mode === "loop")
    return `loop ≤ ${step.maxIterations ?? 10}${step.until ? ` until “${step.until}”` : ""}`;
  if (step.mode === "fanout") return "fanout: runs beside its batch";
  if (step.mode === "collect") return "collect: gets fanoutResults";
  return "";
}

/** The input and output are drawn lower than a step: edges meet their boxes, not the space around. */
const TERMINAL_INSET = 10;
const inset = (node: GraphNode) => (node.step ? 0 : TERMINAL_INSET);

function Edge(props: { edge: GraphEdge; at: Map<string, GraphNode> }) {
  const from = props.at.get(props.edge.from);
  const to = props.at.get(props.edge.to);
  if (!from || !to) return null;
  const right = from.x + NODE.width;
  if (props.edge.kind === "repeat") {
    const top = from.y + 14;
    const bottom = from.y + NODE.height - 14;
    return (
      <path
        class="edge repeat"
        d={`M ${right} ${bottom} C ${right + 44} ${bottom}, ${right + 44} ${top}, ${right} ${top}`}
        marker-end="url(#arrow)"
      />
    );
  }
  const x1 = from.x + NODE.width / 2;
  const y1 = from.y + NODE.height - inset(from);
  const x2 = to.x + NODE.width / 2;
  const y2 = to.y + inset(to);
  if (props.edge.kind === "skip") {
    // Around the right of the conditional step it passes.
    const aside = Math.max(x1, x2) + NODE.width / 2 + 36;
    return (
      <path
        class="edge skip"
        d={`M ${x1} ${y1} C ${aside} ${y1 + 20}, ${aside} ${y2 - 20}, ${x2} ${y2}`}
        marker-end="url(#arrow)"
      />
    );
  }
  const middle = (y1 + y2) / 2;
  return (
    <path
      class={`edge ${props.edge.kind}`}
      d={`M ${x1} ${y1} C ${x1} ${middle}, ${x2} ${middle}, ${x2} ${y2}`}
      marker-end="url(#arrow)"
    />
  );
}

function Node(props: { node: GraphNode }) {
  const { node } = props;
  const { step } = node;
  const terminal = !step;
  const title = step ? step.name : node.id === START ? "input" : "output";
  return (
    <g class={`step ${step?.mode ?? "terminal"}`} transform={`translate(${node.x} ${node.y})`}>
      <title>{step ? `${step.name}: ${step.functionId} (${step.mode}) ${detail(step)}` : title}</title>
      <rect
        width={NODE.width}
        height={terminal ? NODE.height - 20 : NODE.height}
        y={terminal ? 10 : 0}
        rx={8}
      />
      <text x={NODE.width / 2} y={terminal ? 31 : 19} class="name">
        {cut(title, 24)}
      </text>
      {step ? (
        <>
          <text x={NODE.width / 2} y={34} class="function">
            {cut(step.functionId, 30)}
          </text>
          <text x={NODE.width / 2} y={48} class="detail">
            {cut(detail(step), 34)}
          </text>
        </>
      ) : null}
    </g>
  );
}

/** The definition as a graph: fanout branches side by side, the way past a condition, a loop's return. */
export function StepGraph(props: { steps: StepView[] }) {
  const graph = workflowGraph(props.steps);
  const at = new Map(graph.nodes.map((node) => [node.id, node]));
  return (
    <svg
      class="flow"
      viewBox={`0 0 ${graph.width} ${graph.height}`}
      style={{ maxWidth: `${graph.width}px` }}
      role="img"
      aria-label="Workflow steps"
    >
      <defs>
        <marker
          id="arrow"
          viewBox="0 0 10 10"
          refX="9"
          refY="5"
          markerWidth="7"
          markerHeight="7"
          orient="auto"
        >
          <path d="M 0 0 L 10 5 L 0 10 z" />
        </marker>
      </defs>
      {graph.edges.map((edge) => (
        <Edge key={`${edge.kind}:${edge.from}:${edge.to}`} edge={edge} at={at} />
      ))}
      {graph.nodes.map((node) => (
        <Node key={node.id} node={node} />
      ))}
    </svg>
  );
}
