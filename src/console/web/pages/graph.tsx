import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { forceLayout } from "../lib/force.ts";
import { parseJson, parseRelations, preview, when } from "../lib/format.ts";
import type { Answer, Item } from "../types.ts";
import { ApiForm, Empty, Field, Page, Panel, Problem, Show, useLoad } from "../ui.tsx";

type Version = Item<Answer<"kg::query_temporal">>;

const WIDTH = 760;
const HEIGHT = 460;

/** An agent's knowledge graph around an entity, drawn as it was at a chosen moment. */
export function GraphPage() {
  const agents = useLoad(() => api<Answer<"agent::list">>("/api/agents?limit=200"), []);
  const [agentId, setAgentId] = useState("");
  const [entity, setEntity] = useState("");
  const [at, setAt] = useState<number>();
  const [chosen, setChosen] = useState<string>();
  const stats = useLoad(
    () =>
      agentId ? api<Answer<"kg::stats">>("/api/kg/stats", { body: { agentId } }) : Promise.resolve(undefined),
    [agentId],
  );
  const versions = useLoad(
    () =>
      agentId && entity
        ? api<Answer<"kg::query_temporal">>("/api/kg/query", {
            body: {
              agentId,
              entity,
              depth: 3,
              ...(at === undefined ? {} : { timeRange: { from: at, to: at } }),
            },
          })
        : Promise.resolve([]),
    [agentId, entity, at],
  );
  const look = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setAgentId(String(form.get("agentId") ?? ""));
    setEntity(String(form.get("entity") ?? "").trim());
    setAt(undefined);
    setChosen(undefined);
  };
  return (
    <Page title="Knowledge graph">
      <form class="inline" onSubmit={look}>
        <select name="agentId" aria-label="Agent" required>
          {(agents.value?.agents ?? []).map((agent) => (
            <option key={agent.id} value={agent.id}>
              {agent.name}
            </option>
          ))}
        </select>
        <input name="entity" required placeholder="Start entity" aria-label="Start entity" />
        <button type="submit">Show</button>
      </form>
      {stats.value ? (
        <p class="muted">
          {stats.value.totalEntities} entities · {stats.value.totalRelations} relations ·{" "}
          {stats.value.connectedComponents} components
        </p>
      ) : null}
      <Show loaded={versions}>
        {(list) =>
          !entity ? (
            <Empty>Pick an agent and an entity its graph holds.</Empty>
          ) : list.length === 0 ? (
            <Empty>Nothing known about {entity} at that time.</Empty>
          ) : (
            <div class="grid">
              <Panel title="Graph" wide>
                <TimeSlider versions={list} at={at} onChange={setAt} />
                <Drawing versions={list} chosen={chosen} onChoose={setChosen} />
              </Panel>
              {chosen ? <History agentId={agentId} entity={chosen} at={at} /> : null}
            </div>
          )
        }
      </Show>
      <Problem error={agents.error} />
      {agents.value?.agents.length ? (
        <Panel title="Add or change an entity" wide>
          <ApiForm
            submit="Save entity"
            fields={[
              {
                name: "agent",
                label: "Agent's graph",
                options: agents.value.agents.map((agent) => agent.name),
              },
              { name: "entity", label: "Entity", required: true, placeholder: "Ada" },
              { name: "type", label: "Type", required: true, placeholder: "person" },
              { name: "properties", label: "Properties (JSON)", placeholder: '{"born": 1815}' },
              {
                name: "relations",
                label: "Relations",
                placeholder: "worked_on: Analytical Engine; knows: Babbage",
              },
            ]}
            run={async (values) => {
              const owner = agents.value?.agents.find((agent) => agent.name === values.agent);
              await api("/api/kg/add", {
                body: {
                  agentId: owner?.id,
                  entity: values.entity,
                  type: values.type,
                  properties: values.properties ? parseJson(values.properties, "Properties") : {},
                  relations: parseRelations(values.relations ?? ""),
                },
              });
              if (owner?.id === agentId) versions.reload();
              stats.reload();
            }}
          />
        </Panel>
      ) : null}
    </Page>
  );
}

function TimeSlider(props: { versions: Version[]; at?: number; onChange: (at: number | undefined) => void }) {
  const first = Math.min(...props.versions.map((version) => version.validFrom));
  const now = Date.now();
  const value = props.at ?? now;
  return (
    <Field label={`As of ${props.at === undefined ? "now" : new Date(value).toLocaleString()}`}>
      <input
        type="range"
        min={first}
        max={now}
        value={value}
        aria-label="Point in time"
        onChange={(event) => {
          const picked = Number(event.currentTarget.value);
          props.onChange(picked >= now - 1000 ? undefined : picked);
        }}
      />
    </Field>
  );
}

/** A version's own relations: the `inverse:` ones shown on targets are the same edges seen from the other end. */
const stored = (version: Version) =>
  version.relations.filter((relation) => !relation.type.startsWith("inverse:"));

function Drawing(props: { versions: Version[]; chosen?: string; onChoose: (entity: string) => void }) {
  const names = new Set(props.versions.map((version) => version.entity));
  for (const version of props.versions) for (const relation of stored(version)) names.add(relation.target);
  const edges = props.versions.flatMap((version) =>
    stored(version).map((relation) => [version.entity, relation.target, relation.type] as const),
  );
  const placed = new Map(
    forceLayout(
      [...names],
      edges.map(([from, to]) => [from, to]),
      { width: WIDTH, height: HEIGHT },
    ).map((node) => [node.id, node]),
  );
  const known = new Set(props.versions.map((version) => version.entity));
  return (
    <svg class="kg" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label="Knowledge graph">
      {edges.map(([from, to, type]) => {
        const a = placed.get(from);
        const b = placed.get(to);
        if (!a || !b) return null;
        return (
          <g key={`${from}-${type}-${to}`}>
            <line x1={a.x} y1={a.y} x2={b.x} y2={b.y} />
            <text class="edge" x={(a.x + b.x) / 2} y={(a.y + b.y) / 2}>
              {type}
            </text>
          </g>
        );
      })}
      {[...placed.values()].map((node) => (
        // biome-ignore lint/a11y/useSemanticElements: an SVG node cannot be a <button>; it acts as one
        <g
          key={node.id}
          class={`${known.has(node.id) ? "node" : "node stub"}${node.id === props.chosen ? " chosen" : ""}`}
          role="button"
          tabIndex={0}
          aria-label={node.id}
          onClick={() => props.onChoose(node.id)}
          onKeyDown={(event) => event.key === "Enter" && props.onChoose(node.id)}
        >
          <circle cx={node.x} cy={node.y} r={14} />
          <text x={node.x} y={node.y + 28}>
            {node.id}
          </text>
        </g>
      ))}
    </svg>
  );
}

type Diff = Answer<"kg::diff">;

function History(props: { agentId: string; entity: string; at?: number }) {
  const timeline = useLoad(
    () =>
      api<Answer<"kg::timeline">>("/api/kg/timeline", {
        body: { agentId: props.agentId, entity: props.entity },
      }),
    [props.agentId, props.entity],
  );
  const diff = useLoad(
    () =>
      props.at === undefined
        ? Promise.resolve(undefined)
        : api<Diff>("/api/kg/diff", {
            body: {
              agentId: props.agentId,
              entity: props.entity,
              timestamp1: props.at,
              timestamp2: Date.now(),
            },
          }),
    [props.agentId, props.entity, props.at],
  );
  return (
    <Panel title={props.entity}>
      <Show loaded={timeline}>
        {(list) => (
          <ol class="list">
            {list.map((version) => (
              <li key={version.version}>
                <span>
                  v{version.version} {version.type} · from {when(new Date(version.validFrom).toISOString())}
                </span>
                <small>{preview(version.properties, 200)}</small>
              </li>
            ))}
          </ol>
        )}
      </Show>
      {diff.value ? (
        <div class="diff">
          <h3>Since the chosen time</h3>
          <p>
            added {preview(diff.value.added, 200)} · removed {preview(diff.value.removed, 200)} · changed{" "}
            {preview(diff.value.modified, 200)}
          </p>
        </div>
      ) : null}
    </Panel>
  );
}
