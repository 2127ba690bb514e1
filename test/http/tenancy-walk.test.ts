import { describe, expect, it } from "vitest";
import { serverWithFakeModel } from "../helpers/fake-openai.ts";
import { changedRecords, createRealmFixture, type RealmFixture, snapshotRealm } from "../helpers/fixtures.ts";
import { json } from "../helpers/server.ts";

/**
 * The tenancy walk (issue #11): realm B's key against realm A's resources on every route of the OpenAPI
 * document. No answer may carry A's data (A's marker), no request may change A's stored records, and a
 * request naming A's resources must not succeed unless its route is global (listed below, with why).
 * New routes are walked because they appear in the document.
 */
const ctx = serverWithFakeModel();

/** Routes any key may use with success, whatever it names: they hold no tenant's data. */
const GLOBAL: Record<string, string> = {
  "api::health": "service health: status, version, uptime",
  "api::openapi": "the API's own description",
  "catalog::models": "the model catalog is the same for every tenant",
  "catalog::aliases": "the model catalog is the same for every tenant",
  "catalog::providers": "the model catalog is the same for every tenant",
};

/** Served by the HTTP server itself rather than by a function's trigger, so not in the document. */
/** Routes the server answers itself, not through a trigger; documented too (test/http/openapi-lint). */
const SERVED_BY_THE_SERVER = {
  "GET /healthz": "liveness probe, no key, no data",
  "GET /metrics": "Prometheus text, admin keys only (checked in test/http/metrics)",
};

const NEVER = "0 0 0 1 1 *";

interface WalkRequest {
  label: string;
  method: string;
  path: string;
  body?: unknown;
}

type Operation = {
  operationId: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Record<string, unknown> }>;
  requestBody?: { content: { "application/json": { schema: JsonSchema } } };
};
type JsonSchema = { properties?: Record<string, Record<string, unknown>>; required?: string[] };

/** Bodies that would succeed for A's own key: B's attempt is refused only for being B. */
function validBodies(a: RealmFixture, b: RealmFixture): Record<string, unknown[]> {
  const spend = { costCents: 1, provider: "openai", model: "gpt-4o", inputTokens: 1, outputTokens: 1 };
  const steps = [{ name: "s", functionId: "memory::recall" }];
  return {
    "agent::create": [{ realmId: a.realmId, name: "x", model: "gpt-4o" }],
    "agent::message": [{ message: "hi" }, { message: "hi", sessionId: a.sessionId }],
    "agent::memory": [{ query: "remember" }],
    "directive::create": [{ realmId: a.realmId, title: "x", level: "realm", parentId: a.directiveId }],
    "directive::update": [{ status: "Paused" }],
    "ledger::set_budget": [
      { realmId: a.realmId, agentId: a.agentId, monthlyCents: 1 },
      { realmId: a.realmId, monthlyCents: 1 },
    ],
    "ledger::spend": [{ realmId: a.realmId, agentId: a.agentId, ...spend }],
    "pulse::register": [{ realmId: a.realmId, agentId: a.agentId, cron: NEVER }],
    "pulse::invoke": [{ realmId: a.realmId, agentId: a.agentId }],
    "pulse::toggle": [{ enabled: false }],
    "hierarchy::set": [{ realmId: a.realmId, agentId: a.agentId, title: "x" }],
    "workflow::create": [{ realmId: a.realmId, id: a.workflowId, name: "x", steps }],
    "workflow::update": [
      { realmId: a.realmId, name: "x" },
      { name: "x", steps },
    ],
    "workflow::run": [
      { workflowId: a.workflowId, realmId: a.realmId },
      { workflowId: a.workflowId },
      // B's own workflow, run on A's agent: the agent must not be found from B.
      { workflowId: b.workflowId, agentId: a.agentId },
    ],
    "realm::update": [{ status: "Archived" }, { name: "x" }],
    "realm::export": [{}],
    "auth::keys::create": [{ realmId: a.realmId }],
    "vault::set": [{ key: "x", value: "y" }],
    "openai::chat_completions": [
      { model: `agent:${a.agentId}`, messages: [{ role: "user", content: "hi" }] },
      { model: a.agentId, messages: [{ role: "user", content: "hi" }] },
    ],
  };
}

/** A's id for a parameter or field name; `id` by the path's resource. */
function idFor(name: string, path: string, a: RealmFixture): string | undefined {
  if (name === "id") {
    const resource = path.split("/")[2];
    const byResource: Record<string, string> = {
      agents: a.agentId,
      workflows: a.workflowId,
      directives: a.directiveId,
      realms: a.realmId,
      keys: a.keyId,
      missions: a.missionId,
      council: a.proposalId,
    };
    return byResource[resource ?? ""] ?? a.agentId;
  }
  const byName: Record<string, string> = {
    realmId: a.realmId,
    agentId: a.agentId,
    workflowId: a.workflowId,
    runId: a.runId,
    sessionId: a.sessionId,
    directiveId: a.directiveId,
    parentId: a.directiveId,
    rootAgentId: a.agentId,
    entity: a.marker,
    startEntity: a.marker,
    swarmId: a.swarmId,
    key: "x",
  };
  return byName[name];
}

function sample(schema: Record<string, unknown> | undefined): unknown {
  const type = Array.isArray(schema?.type) ? schema?.type[0] : schema?.type;
  if (schema?.enum) return (schema.enum as unknown[])[0];
  if (type === "integer" || type === "number") return 1;
  if (type === "boolean") return true;
  if (type === "array") return [];
  if (type === "object") return {};
  return "x";
}

/** The requests to send for one operation: A's ids everywhere an id goes, valid bodies where known. */
function requestsFor(
  path: string,
  method: string,
  op: Operation,
  a: RealmFixture,
  b: RealmFixture,
): WalkRequest[] {
  const params = op.parameters ?? [];
  let concrete = path;
  for (const param of params.filter((p) => p.in === "path")) {
    concrete = concrete.replace(`{${param.name}}`, encodeURIComponent(idFor(param.name, path, a) ?? "x"));
  }
  const query = new URLSearchParams();
  for (const param of params.filter((p) => p.in === "query")) {
    const value = idFor(param.name, path, a) ?? (param.required ? String(sample(param.schema)) : undefined);
    if (value !== undefined) query.set(param.name, value);
  }
  const label = `${method.toUpperCase()} ${path}`;
  const withQuery = (q: URLSearchParams) => (q.size > 0 ? `${concrete}?${q}` : concrete);
  const requests: WalkRequest[] = [{ label, method, path: withQuery(query) }];
  if (query.has("realmId")) {
    // Without naming the realm the key's own applies: A's ids in the path must then find nothing.
    const own = new URLSearchParams(query);
    own.delete("realmId");
    requests.push({ label: `${label} (key's realm)`, method, path: withQuery(own) });
  }
  if (method === "get" || method === "delete") return requests;
  const schema = op.requestBody?.content["application/json"].schema ?? {};
  const known = validBodies(a, b)[op.operationId];
  const generic: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const id = idFor(name, path, a);
    if (id !== undefined) generic[name] = id;
    else if (schema.required?.includes(name)) generic[name] = sample(property);
  }
  return (known ?? [generic]).map((body, index) => ({
    label: `${label} #${index}`,
    method,
    path: concrete,
    body,
  }));
}

function namesRealmA(request: WalkRequest, a: RealmFixture): boolean {
  const text = request.path + JSON.stringify(request.body ?? {});
  return Object.values(a.ids).some((id) => id && text.includes(id));
}

describe("the tenancy walk", () => {
  it.each([
    ["another realm", {}],
    ["the admin's realm-default", { realmId: "realm-default" }],
  ])(
    "no route answers realm B's key with %s's data, changes it, or succeeds naming it",
    async (_name, where) => {
      const server = ctx.server;
      const a = await createRealmFixture(server, "a", where);
      const b = await createRealmFixture(server, "b");
      const document = await json(await server.request("/api/openapi.json"));

      // Every route is in the document: the routes of the http triggers and the server's own are exactly
      // its operations.
      const triggers = server.service.engine.triggers
        .list()
        .filter((trigger) => trigger.type === "http")
        .map((trigger) => {
          const config = trigger.config as { api_path: string; http_method?: string };
          return `${(config.http_method ?? "GET").toUpperCase()} ${config.api_path.replace(/:(\w+)/g, "{$1}")}`;
        });
      const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(
        ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
      );
      expect(new Set(documented)).toEqual(new Set([...triggers, ...Object.keys(SERVED_BY_THE_SERVER)]));

      const baseline = await snapshotRealm(server, a);
      const failures: string[] = [];
      let sent = 0;
      for (const [path, methods] of Object.entries(
        document.paths as Record<string, Record<string, Operation>>,
      )) {
        for (const [method, op] of Object.entries(methods)) {
          for (const request of requestsFor(path, method, op, a, b)) {
            sent++;
            const response = await server.request(request.path, {
              method: request.method.toUpperCase(),
              key: b.key,
              ...(request.body === undefined ? {} : { json: request.body }),
            });
            const text = await response.text();
            const where = `${request.label} → ${response.status}`;
            if (response.status >= 500) failures.push(`${where}: server error ${text.slice(0, 200)}`);
            if (text.includes(a.marker)) failures.push(`${where}: answered with realm A's data`);
            if (response.status < 300 && namesRealmA(request, a) && !GLOBAL[op.operationId]) {
              failures.push(`${where}: succeeded naming realm A's resources ${text.slice(0, 200)}`);
            }
            const changed = changedRecords(baseline, await snapshotRealm(server, a));
            if (changed.length > 0)
              failures.push(`${where}: changed realm A's records ${changed.join(", ")}`);
          }
        }
      }
      expect(failures).toEqual([]);
      expect(sent).toBeGreaterThan(documented.length);
    },
    120_000,
  );
});
