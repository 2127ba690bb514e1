import { createInterface } from "node:readline/promises";
import { ApiError, api, apiEvents, output, table } from "./api.ts";

interface AgentRow {
  id: string;
  name: string;
  model: string;
  realmId: string;
  status: string;
  toolProfile?: string;
}

type Json = { json?: boolean };

/** Every agent the key sees (of one realm with `realm`), through all pages. */
export async function allAgents(realm?: string): Promise<AgentRow[]> {
  const query = realm ? `?realmId=${encodeURIComponent(realm)}` : "";
  const agents: AgentRow[] = [];
  let page = await api<{ agents: AgentRow[]; nextCursor: string | null }>("GET", `/api/agents${query}`);
  agents.push(...page.agents);
  while (page.nextCursor) {
    const next = `${query ? `${query}&` : "?"}cursor=${encodeURIComponent(page.nextCursor)}`;
    page = await api("GET", `/api/agents${next}`);
    agents.push(...page.agents);
  }
  return agents;
}

/**
 * The id of the agent `ref` names: an agent id as it is, else the agent of that name among those the
 * key sees (names are unique within a realm; an admin key sees every realm, so a name may be ambiguous,
 * and then the ids are listed rather than one picked). Neither: the API's own 404.
 */
export async function agentIdOf(ref: string): Promise<string> {
  let missing: ApiError;
  try {
    return (await api<AgentRow>("GET", `/api/agents/${encodeURIComponent(ref)}`)).id;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    missing = error;
  }
  const named = (await allAgents()).filter((agent) => agent.name === ref);
  if (named.length === 1) return (named[0] as AgentRow).id;
  if (named.length > 1) {
    const ids = named.map((agent) => `${agent.id} in ${agent.realmId}`).join(", ");
    throw new Error(`${named.length} agents are named ${ref} (${ids}): give the id`);
  }
  throw missing;
}

export async function agentsList(options: Json & { realm?: string }): Promise<void> {
  const agents = await allAgents(options.realm);
  output(options.json, agents, () =>
    table(
      ["id", "name", "model", "realm", "status"],
      agents.map((a) => [a.id, a.name, a.model, a.realmId, a.status]),
    ),
  );
}

interface AgentFields {
  model?: string;
  prompt?: string;
  profile?: string;
  realm?: string;
  temperature?: string;
  tools?: string;
}

/** The API's fields from the command's options (only those given). */
function fieldsOf(options: AgentFields): Record<string, unknown> {
  return {
    ...(options.model ? { model: options.model } : {}),
    ...(options.prompt !== undefined ? { systemPrompt: options.prompt } : {}),
    ...(options.profile ? { toolProfile: options.profile } : {}),
    ...(options.realm ? { realmId: options.realm } : {}),
    ...(options.temperature !== undefined ? { temperature: Number(options.temperature) } : {}),
    ...(options.tools !== undefined ? { tools: options.tools.split(",").filter(Boolean) } : {}),
  };
}

export async function agentsCreate(name: string, options: Json & AgentFields): Promise<void> {
  const { id } = await api<{ id: string }>("POST", "/api/agents", { name, ...fieldsOf(options) });
  const agent = await api<AgentRow>("GET", `/api/agents/${encodeURIComponent(id)}`);
  output(
    options.json,
    agent,
    () => `Created ${agent.name} (${agent.id}) on ${agent.model} in ${agent.realmId}.`,
  );
}

export async function agentsUpdate(
  ref: string,
  options: Json & Omit<AgentFields, "realm" | "profile">,
): Promise<void> {
  const fields = fieldsOf(options);
  if (Object.keys(fields).length === 0) {
    throw new Error("nothing to change: give --model, --prompt, --temperature or --tools");
  }
  const id = await agentIdOf(ref);
  const agent = await api<AgentRow>("PATCH", `/api/agents/${encodeURIComponent(id)}`, fields);
  output(options.json, agent, () => `Updated ${agent.name} (${agent.id}): ${agent.model}.`);
}

export async function agentsDelete(ref: string, options: Json): Promise<void> {
  const id = await agentIdOf(ref);
  await api("DELETE", `/api/agents/${encodeURIComponent(id)}`);
  output(options.json, { deleted: id }, () => `Deleted ${id}.`);
}

/**
 * Talks to an agent: one message with --message, else a conversation read line by line from the
 * terminal (an empty line or "exit" ends it). Replies stream as the agent writes them; tool calls show
 * as they happen. --json prints each event as a JSON line instead.
 */
export async function agentsChat(
  ref: string,
  options: Json & { message?: string; session?: string },
): Promise<void> {
  const id = await agentIdOf(ref);
  let sessionId = options.session;
  const say = async (message: string) => {
    for await (const { event, data } of apiEvents("POST", `/api/agents/${encodeURIComponent(id)}/message`, {
      message,
      stream: true,
      ...(sessionId ? { sessionId } : {}),
    })) {
      if (options.json) process.stdout.write(`${JSON.stringify({ event, data })}\n`);
      else printEvent(event, data);
      if (event === "done") sessionId = (data as { sessionId?: string }).sessionId ?? sessionId;
      if (event === "error")
        throw new Error(String((data as { error?: unknown }).error ?? "the turn failed"));
    }
  };
  if (options.message !== undefined) return say(options.message);
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      const line = (await terminal.question("you> ").catch(() => "")).trim();
      if (line === "" || line === "exit") return;
      await say(line);
    }
  } finally {
    terminal.close();
  }
}

function printEvent(event: string, data: unknown): void {
  const fields = data as Record<string, unknown>;
  if (event === "start") process.stdout.write("agent> ");
  else if (event === "text") process.stdout.write(String(fields.text));
  else if (event === "tool_call")
    process.stdout.write(`\n  [${String(fields.toolName)} ${JSON.stringify(fields.input)}]\n`);
  else if (event === "tool_result") process.stdout.write(`  [${String(fields.toolName)} answered]\n`);
  else if (event === "done") process.stdout.write("\n");
}
