import { closeSync, fchmodSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { agentIdOf } from "./agents.ts";
import { api, output, table } from "./api.ts";

type Json = { json?: boolean };

interface WorkflowRow {
  id: string;
  name: string;
  realmId: string;
  version?: number;
  steps?: unknown[];
}

export async function workflowsList(options: Json): Promise<void> {
  const workflows = await api<WorkflowRow[]>("GET", "/api/workflows");
  output(options.json, workflows, () =>
    table(
      ["id", "name", "realm", "steps", "version"],
      workflows.map((w) => [w.id, w.name, w.realmId, w.steps?.length, w.version]),
    ),
  );
}

/**
 * The workflow `ref` names, by id, else by name, among those the key sees: ids are unique within a
 * realm, so the realm goes with it (an admin key may run any realm's). Several: their realms are listed
 * rather than one picked. None: `ref` as it is, for the API to answer (its 404).
 */
async function workflowOf(ref: string): Promise<{ id: string; realmId?: string }> {
  const workflows = await api<WorkflowRow[]>("GET", "/api/workflows");
  const byId = workflows.filter((w) => w.id === ref);
  const found = byId.length > 0 ? byId : workflows.filter((w) => w.name === ref);
  if (found.length > 1) {
    const which = found.map((w) => `${w.id} in ${w.realmId}`).join(", ");
    throw new Error(
      `${found.length} workflows are called ${ref} (${which}): give the id, or use a realm's key`,
    );
  }
  const [workflow] = found;
  return workflow ? { id: workflow.id, realmId: workflow.realmId } : { id: ref };
}

export async function workflowsRun(
  ref: string,
  options: Json & { input?: string; agent?: string },
): Promise<void> {
  const workflow = await workflowOf(ref);
  const agentId = options.agent === undefined ? undefined : await agentIdOf(options.agent);
  const run = await api<{
    runId: string;
    status: string;
    results?: Array<{ stepName: string; output: unknown }>;
  }>("POST", "/api/workflows/run", {
    workflowId: workflow.id,
    ...(workflow.realmId ? { realmId: workflow.realmId } : {}),
    ...(agentId ? { agentId } : {}),
    ...(options.input !== undefined ? { input: parseInput(options.input) } : {}),
  });
  output(options.json, run, () => {
    const steps = (run.results ?? []).map((r) => [r.stepName, preview(r.output)]);
    return `Run ${run.runId}: ${run.status}\n${table(["step", "output"], steps)}`;
  });
}

export async function workflowsRuns(ref: string, options: Json): Promise<void> {
  const workflow = await workflowOf(ref);
  const realm = workflow.realmId ? `?realmId=${encodeURIComponent(workflow.realmId)}` : "";
  const answer = await api<{
    runs: Array<{ runId: string; status: string; startedAt?: string; error?: string }>;
  }>("GET", `/api/workflows/${encodeURIComponent(workflow.id)}/runs${realm}`);
  output(options.json, answer, () =>
    table(
      ["run", "status", "started", "error"],
      answer.runs.map((r) => [r.runId, r.status, r.startedAt, r.error]),
    ),
  );
}

interface RealmRow {
  id: string;
  name: string;
  owner?: string;
  status: string;
  maxAgents?: number | null;
}

export async function realmsList(options: Json): Promise<void> {
  const realms = await api<RealmRow[]>("GET", "/api/realms");
  output(options.json, realms, () =>
    table(
      ["id", "name", "owner", "status"],
      realms.map((r) => [r.id, r.name, r.owner, r.status]),
    ),
  );
}

export async function realmsCreate(
  name: string,
  options: Json & { owner?: string; description?: string },
): Promise<void> {
  const realm = await api<RealmRow>("POST", "/api/realms", {
    name,
    owner: options.owner ?? process.env.USER ?? "cli",
    ...(options.description ? { description: options.description } : {}),
  });
  output(options.json, realm, () => `Created realm ${realm.name} (${realm.id}).`);
}

export async function realmsGet(id: string, options: Json): Promise<void> {
  const realm = await api<RealmRow>("GET", `/api/realms/${encodeURIComponent(id)}`);
  output(options.json, realm, () =>
    table(["id", "name", "owner", "status"], [[realm.id, realm.name, realm.owner, realm.status]]),
  );
}

/** pause, resume (Active) or archive a realm. */
export function realmsSetStatus(status: "Active" | "Paused" | "Archived") {
  return async (id: string, options: Json): Promise<void> => {
    const realm = await api<RealmRow>("PATCH", `/api/realms/${encodeURIComponent(id)}`, { status });
    output(options.json, realm, () => `Realm ${realm.id} is ${realm.status}.`);
  };
}

export async function realmsDelete(id: string, options: Json): Promise<void> {
  await api("DELETE", `/api/realms/${encodeURIComponent(id)}`);
  output(options.json, { deleted: id }, () => `Deleted realm ${id}.`);
}

export async function realmsExport(id: string, options: Json & { file?: string }): Promise<void> {
  const doc = await api("POST", `/api/realms/${encodeURIComponent(id)}/export`, {});
  if (options.file) {
    writePrivateFile(options.file, `${JSON.stringify(doc, null, 2)}\n`);
    output(
      options.json,
      { exported: id, file: options.file },
      () => `Exported realm ${id} to ${options.file}.`,
    );
  } else process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

/**
 * Owner-only before a byte is written: open()'s mode applies only to a file it creates, so an earlier
 * export (or a file made under umask 022) would otherwise keep its mode, readable to other users.
 */
function writePrivateFile(file: string, text: string): void {
  const fd = openSync(file, "w", 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeFileSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

export async function realmsImport(file: string, options: Json & { owner?: string }): Promise<void> {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: not a readable JSON export document (${(error as Error).message})`);
  }
  const result = await api<{ realmId: string }>("POST", "/api/realms/import", {
    data: doc,
    ...(options.owner ? { newOwner: options.owner } : {}),
  });
  output(options.json, result, () => `Imported as realm ${result.realmId}.`);
}

export async function functionsList(options: Json & { prefix?: string }): Promise<void> {
  const query = options.prefix ? `?prefix=${encodeURIComponent(options.prefix)}` : "";
  const answer = await api<{ functions: Array<{ id: string; worker: string; description: string }> }>(
    "GET",
    `/api/functions${query}`,
  );
  output(options.json, answer.functions, () =>
    table(
      ["function", "worker", "description"],
      answer.functions.map((f) => [f.id, f.worker, f.description]),
    ),
  );
}

/** A workflow input given on the command line: JSON when it parses as JSON, else the text itself. */
function parseInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function preview(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
