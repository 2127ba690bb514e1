import type { StateClient } from "../../engine/state/client.ts";
import { systemCall } from "../../engine/system-call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { badRequest, conflict, describeZodError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { purgeRealmData, secretPrefix } from "./cascade.ts";
import { assertUnique, orderDirectives, orderHierarchy } from "./order.ts";
import { EXPORT_VERSION, type ExportDocument, exportDocument, REALMS_SCOPE, type Realm } from "./schema.ts";
import { insertRealm, updateRealm } from "./store.ts";

export interface ImportDeps {
  state: StateClient;
  trigger: TriggerFn;
  /** Throws a 400 when the catalog does not know the model. */
  checkModel: (model: string) => Promise<void>;
}

type Ids = Map<string, string>;
/** Fields the service assigns: an import gets fresh ones. */
const ASSIGNED = new Set(["id", "realmId", "createdAt", "updatedAt", "status", "version"]);

/**
 * A new realm built from an export document, every id fresh and every reference (directive parent and
 * owner, org-chart manager) rewritten to the new ids. It is built through the owning workers' own
 * create functions, so their validation applies. All or nothing: on any failure whatever was created is
 * purged again and the 400 names the item that failed.
 */
export async function importRealm(
  deps: ImportDeps,
  data: Record<string, unknown>,
  newOwner: string | undefined,
): Promise<string> {
  const doc = parseDocument(data);
  const owner = newOwner ?? doc.realm.owner;
  if (!owner) throw badRequest("owner is required: give newOwner or data.realm.owner");
  if (doc.realm.defaultModel) await deps.checkModel(doc.realm.defaultModel);
  // Order (and so check) the references before anything is written. Two agents under one id would
  // both be created, with every reference to the id going to whichever came last.
  assertUnique(
    doc.agents.map((agent) => agent.id),
    "agent",
  );
  const directives = orderDirectives(doc.directives);
  const hierarchy = orderHierarchy(doc.hierarchy);
  const realmId = await createShell(deps.state, doc, owner);
  const progress = { item: "realm" };
  try {
    const agentIds = await createAgents(deps.trigger, realmId, doc, progress);
    await createDirectives(deps.trigger, realmId, directives, agentIds, progress);
    await setHierarchy(deps.trigger, realmId, hierarchy, agentIds, progress);
    await storeSecrets(deps.trigger, realmId, doc.secrets ?? {}, progress);
    progress.item = "realm";
    await finishRealm(deps.state, realmId, doc);
  } catch (error) {
    throw badRequest(
      `Import failed at ${progress.item}: ${(error as Error).message}${await undo(deps, realmId)}`,
    );
  }
  return realmId;
}

function parseDocument(data: Record<string, unknown>): ExportDocument {
  if (data.version !== EXPORT_VERSION) {
    const version = typeof data.version === "string" ? data.version : JSON.stringify(data.version ?? null);
    throw badRequest(`unsupported export version: ${version}`);
  }
  const parsed = exportDocument.safeParse(data);
  if (!parsed.success) throw badRequest(`data: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * The realm record, Active and without maxAgents while it is filled (so a limit lowered below the
 * agent count after the export cannot refuse the realm's own agents); finishRealm sets both.
 */
async function createShell(state: StateClient, doc: ExportDocument, owner: string): Promise<string> {
  const now = nowIso();
  const { realm } = doc;
  const record: Realm = {
    id: newId("realm"),
    name: realm.name,
    owner,
    status: "Active",
    ...(realm.description != null ? { description: realm.description } : {}),
    ...(realm.defaultModel != null ? { defaultModel: realm.defaultModel } : {}),
    ...(realm.metadata != null ? { metadata: realm.metadata } : {}),
    createdAt: now,
    updatedAt: now,
  };
  await insertRealm(state, record);
  return record.id;
}

/**
 * A Paused realm stays Paused; Active and Archived come back Active (an archive restored is usable).
 * The realm is read again even with nothing to set: a delete that started during the import may have
 * purged before the last items were written (the vault stores secrets without asking the realm), so a
 * realm being deleted, or gone, fails the import and its undo takes every item away again.
 */
async function finishRealm(state: StateClient, realmId: string, doc: ExportDocument): Promise<void> {
  const { maxAgents, status } = doc.realm;
  await updateRealm(state, realmId, (realm) => {
    if (realm.deleting) throw conflict(`Realm ${realmId} is being deleted`);
    if (maxAgents == null && status !== "Paused") return undefined;
    return {
      ...realm,
      ...(maxAgents != null ? { maxAgents } : {}),
      ...(status === "Paused" ? { status: "Paused" as const } : {}),
      updatedAt: nowIso(),
    };
  });
}

async function createAgents(
  trigger: TriggerFn,
  realmId: string,
  doc: ExportDocument,
  progress: { item: string },
) {
  const ids: Ids = new Map();
  for (const agent of doc.agents) {
    progress.item = `agent ${agent.id}${agent.name ? ` (${agent.name})` : ""}`;
    const config = Object.fromEntries(Object.entries(agent).filter(([field]) => !ASSIGNED.has(field)));
    // The agent's other fields go as the document has them: agent::create checks every one.
    const created = await systemCall(trigger, "agent::create", {
      ...config,
      name: text("name", agent.name),
      realmId,
    });
    ids.set(agent.id, created.id);
  }
  return ids;
}

/** Created parent-first with references mapped; statuses other than Active are applied once all exist. */
async function createDirectives(
  trigger: TriggerFn,
  realmId: string,
  directives: ExportDocument["directives"],
  agentIds: Ids,
  progress: { item: string },
): Promise<void> {
  const ids: Ids = new Map();
  for (const directive of directives) {
    progress.item = `directive ${directive.id}`;
    const { title, level, description, priority, parentId, ownerAgentId } = directive;
    const owner = ownerAgentId ? agentIds.get(ownerAgentId) : undefined;
    const parent = parentId ? ids.get(parentId) : undefined;
    const about = optionalText("description", description);
    const urgency = optionalText("priority", priority);
    const created = await systemCall(trigger, "directive::create", {
      realmId,
      title: text("title", title),
      level: text("level", level),
      ...(about !== undefined ? { description: about } : {}),
      ...(urgency !== undefined ? { priority: urgency } : {}),
      ...(parent ? { parentId: parent } : {}),
      // An owner that is not in the document was deleted since: the directive comes back unowned.
      ...(owner ? { ownerAgentId: owner } : {}),
    });
    ids.set(directive.id, created.id);
  }
  // Children first, in case closing a parent ever depends on its children. Every status is reachable
  // from Active in one move (Paused, Complete, Cancelled).
  for (const directive of [...directives].reverse()) {
    if (!directive.status || directive.status.toLowerCase() === "active") continue;
    progress.item = `directive ${directive.id} (status ${directive.status})`;
    const id = ids.get(directive.id);
    if (id === undefined) throw new Error(`directive ${directive.id} was not created`);
    await systemCall(trigger, "directive::update", { realmId, id, status: directive.status });
  }
}

/** Managers before their reports; a node of an agent not in the document is left out (deleted since). */
async function setHierarchy(
  trigger: TriggerFn,
  realmId: string,
  nodes: ExportDocument["hierarchy"],
  agentIds: Ids,
  progress: { item: string },
): Promise<void> {
  const placed = new Set<string>();
  for (const node of nodes) {
    const agentId = agentIds.get(node.agentId);
    if (!agentId) continue;
    progress.item = `hierarchy node ${node.agentId}`;
    // Parent-first order: a manager that has a node is placed by now; any other makes this a root.
    const reportsTo = node.reportsTo && placed.has(node.reportsTo) ? agentIds.get(node.reportsTo) : undefined;
    await systemCall(trigger, "hierarchy::set", {
      realmId,
      agentId,
      reportsTo: reportsTo ?? null,
      ...(node.title != null ? { title: node.title } : {}),
      ...(node.capabilities != null ? { capabilities: node.capabilities } : {}),
      ...(node.rank != null ? { rank: node.rank } : {}),
    });
    placed.add(node.agentId);
  }
}

async function storeSecrets(
  trigger: TriggerFn,
  realmId: string,
  secrets: Record<string, string>,
  progress: { item: string },
): Promise<void> {
  for (const [name, value] of Object.entries(secrets)) {
    progress.item = `secret ${name}`;
    await systemCall(trigger, "vault::set", { key: `${secretPrefix(realmId)}${name}`, value });
  }
}

/** Removes the half-built realm; returns text to add to the error when even that fails. */
async function undo(deps: ImportDeps, realmId: string): Promise<string> {
  try {
    await purgeRealmData(deps.trigger, realmId);
    await deps.state.delete(REALMS_SCOPE, realmId);
    return "";
  } catch (error) {
    return `; removing the partly imported realm ${realmId} failed too (${(error as Error).message}): delete it`;
  }
}

/**
 * A field of the document the owning function takes as text: anything else it would refuse, and so is
 * refused here, in its words.
 */
function text(field: string, value: unknown): string {
  if (typeof value !== "string") throw new Error(`${field}: ${field} must be a string`);
  return value;
}

/** As text, for a field the function may go without (absent or null: left out). */
function optionalText(field: string, value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : text(field, value);
}
