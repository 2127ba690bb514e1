import type { AgentDetail } from "../types.ts";

const list = (text: string) =>
  text
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);

/** Only what the form changed: the rest of the agent stays as it is (a PATCH). */
export function agentChanges(agent: AgentDetail, form: Record<string, string>): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  const text = (field: "model" | "description" | "systemPrompt") => {
    const entered = form[field] ?? "";
    if (entered !== (agent[field] ?? "") && (entered !== "" || field !== "model")) changes[field] = entered;
  };
  text("model");
  text("description");
  text("systemPrompt");
  if (form.toolProfile && form.toolProfile !== agent.toolProfile) changes.toolProfile = form.toolProfile;
  const tools = list(form.tools ?? "");
  if (tools.join(",") !== agent.tools.join(",")) changes.tools = tools;
  // The API takes no null here: a field emptied in the form is left as it is.
  const capabilities = list(form.capabilities ?? "");
  if (capabilities.length && capabilities.join(",") !== (agent.capabilities ?? []).join(","))
    changes.capabilities = capabilities;
  const temperature = form.temperature ? Number(form.temperature) : undefined;
  if (temperature !== undefined && temperature !== agent.temperature) changes.temperature = temperature;
  return changes;
}
