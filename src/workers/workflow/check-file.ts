import { describeZodError } from "../../shared/errors.ts";
import { withFileId } from "./definitions.ts";
import { loadWorkflowFiles, type WorkflowFile } from "./files.ts";
import { workflowInput } from "./schema.ts";
import { templateProblem } from "./variables.ts";

export interface WorkflowFileCheck {
  workflows: Array<{ id: string; file: string }>;
  problems: Array<{ file: string; message: string }>;
}

/**
 * What can be checked of `workflows/*.yaml` without a running service: YAML, fields, step names,
 * template variables, and ids unique across files. Whether each function exists and each `agent:` names
 * an agent of the realm is known only when the service loads the file (an agent may be made over the API).
 */
export function checkWorkflowFiles(directory: string): WorkflowFileCheck {
  const report: WorkflowFileCheck = { workflows: [], problems: [] };
  const files = loadWorkflowFiles(directory, (message) => {
    // loadWorkflowFiles says "Skipping <path>: <why>": the path is the file of the problem.
    const match = /^Skipping (.+?): (.*)$/s.exec(message);
    report.problems.push(
      match ? { file: match[1] as string, message: match[2] as string } : { file: directory, message },
    );
  });
  const seen = new Map<string, string>();
  for (const file of files) {
    const problem = checkWorkflowFile(file);
    if (typeof problem === "string") {
      report.problems.push({ file: file.path, message: problem });
      continue;
    }
    const earlier = seen.get(problem.id);
    if (earlier) {
      report.problems.push({
        file: file.path,
        message: `id: workflow ${problem.id} is also defined by ${earlier}`,
      });
      continue;
    }
    seen.set(problem.id, file.path);
    report.workflows.push({ id: problem.id, file: file.path });
  }
  return report;
}

/** The file's workflow id, or the first problem of its definition (naming the field). */
export function checkWorkflowFile(file: WorkflowFile): { id: string } | string {
  const definition = withPlaceholderAgents(withFileId(file));
  if (typeof definition === "string") return definition;
  const parsed = workflowInput.safeParse(definition);
  if (!parsed.success) return describeZodError(parsed.error);
  return templateProblem(parsed.data.steps) ?? { id: parsed.data.id ?? "" };
}

/** `agent: <name>` stands for an agent id resolved at load: any non-empty name passes here. */
function withPlaceholderAgents(definition: unknown): unknown {
  if (typeof definition !== "object" || definition === null) return definition;
  const steps = (definition as { steps?: unknown }).steps;
  if (!Array.isArray(steps)) return definition;
  const resolved: unknown[] = [];
  for (const [index, step] of steps.entries()) {
    if (typeof step !== "object" || step === null || !("agent" in step)) {
      resolved.push(step);
      continue;
    }
    const { agent, ...rest } = step as { agent: unknown };
    if (typeof agent !== "string" || agent.trim() === "")
      return `steps.${index}.agent: must be an agent's name`;
    resolved.push({ ...rest, agentId: agent });
  }
  return { ...definition, steps: resolved };
}
