import { useState } from "preact/hooks";
import { api, apiText } from "../api.ts";
import { duration, preview, when } from "../lib/format.ts";
import { metricTotals } from "../lib/metrics.ts";
import { Action, ApiForm, Badge, Page, Panel, Problem, Show, useLoad } from "../ui.tsx";

interface Health {
  status: string;
  version: string;
  workers: number;
  uptime: number;
}
interface FunctionInfo {
  id: string;
  worker: string;
  description: string;
}
interface AuditEntry {
  seq: number;
  type: string;
  agentId?: string;
  timestamp: string;
  detail?: unknown;
}
interface Verify {
  valid: boolean;
  length: number;
  brokenAt: number | null;
  reason?: string;
}
interface Key {
  id: string;
  name: string;
  role: string;
  realmId?: string;
  hint: string;
  createdAt: string;
}

export function OperationsPage(props: { admin: boolean }) {
  const health = useLoad(() => api<Health>("/api/health"), []);
  const functions = useLoad(() => api<{ functions: FunctionInfo[] }>("/api/functions"), []);
  return (
    <Page title="Operations">
      <div class="grid">
        <Panel title="Health">
          <Show loaded={health}>
            {(value) => (
              <dl class="facts">
                <dt>Status</dt>
                <dd>
                  <Badge value={value.status} />
                </dd>
                <dt>Version</dt>
                <dd>{value.version}</dd>
                <dt>Workers</dt>
                <dd>{value.workers}</dd>
                <dt>Up for</dt>
                <dd>{duration(value.uptime * 1000)}</dd>
              </dl>
            )}
          </Show>
        </Panel>
        {props.admin ? <Metrics /> : null}
        {props.admin ? <WorkerTable /> : null}
        <Panel title="Functions by worker" wide>
          <Show loaded={functions}>{(value) => <Workers functions={value.functions} />}</Show>
        </Panel>
        <Channels />
        <Runtimes admin={props.admin} />
        {props.admin ? <Vault /> : null}
        {props.admin ? <Configuration /> : null}
        {props.admin ? <Audit /> : null}
        {props.admin ? <Keys /> : null}
      </div>
    </Page>
  );
}

function Workers(props: { functions: FunctionInfo[] }) {
  const byWorker = new Map<string, FunctionInfo[]>();
  for (const fn of props.functions) byWorker.set(fn.worker, [...(byWorker.get(fn.worker) ?? []), fn]);
  return (
    <div class="workers">
      {[...byWorker].map(([worker, list]) => (
        <details key={worker}>
          <summary>
            {worker} <small>{list.length} functions</small>
          </summary>
          <ul>
            {list.map((fn) => (
              <li key={fn.id} title={fn.description}>
                <code>{fn.id}</code>
              </li>
            ))}
          </ul>
        </details>
      ))}
    </div>
  );
}

function Metrics() {
  const metrics = useLoad(() => apiText("/metrics").then(metricTotals), []);
  return (
    <Panel title="Metrics at a glance">
      <Show loaded={metrics}>
        {(totals) => (
          <dl class="facts">
            {Object.entries(totals).map(([name, value]) => (
              <>
                <dt key={`${name}-name`}>{name}</dt>
                <dd key={`${name}-value`}>{Number.isInteger(value) ? value : value.toFixed(4)}</dd>
              </>
            ))}
          </dl>
        )}
      </Show>
    </Panel>
  );
}

function Audit() {
  const log = useLoad(() => api<{ entries: AuditEntry[] }>("/api/audit?limit=20"), []);
  const [verified, setVerified] = useState<Verify>();
  return (
    <Panel title="Audit log" wide>
      <Action
        label="Verify the chain"
        run={async () => setVerified(await api<Verify>("/api/audit/verify"))}
      />
      {verified ? (
        <p class={verified.valid ? "ok" : "problem"} role="status">
          {verified.valid
            ? `The chain is intact: ${verified.length} entries verified.`
            : `The chain is broken at entry ${verified.brokenAt}: ${verified.reason ?? ""}`}
        </p>
      ) : null}
      <Show loaded={log}>
        {(value) => (
          <table>
            <thead>
              <tr>
                <th>#</th>
                <th>Type</th>
                <th>Agent</th>
                <th>When</th>
                <th>Detail</th>
              </tr>
            </thead>
            <tbody>
              {value.entries.map((entry) => (
                <tr key={entry.seq}>
                  <td>{entry.seq}</td>
                  <td>{entry.type}</td>
                  <td>{entry.agentId ?? "—"}</td>
                  <td>{when(entry.timestamp)}</td>
                  <td>
                    <code>{preview(entry.detail ?? "", 120)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
    </Panel>
  );
}

function Keys() {
  const keys = useLoad(() => api<{ keys: Key[] }>("/api/keys?limit=200"), []);
  const [made, setMade] = useState<string>();
  const [error, setError] = useState<string>();
  const create = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const realmId = String(form.get("realmId") ?? "").trim();
    setError(undefined);
    try {
      const key = await api<{ key: string }>("/api/keys", {
        body: { name: String(form.get("name") ?? "").trim(), ...(realmId ? { realmId } : {}) },
      });
      setMade(key.key);
      keys.reload();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <Panel title="API keys" wide>
      <form class="inline" onSubmit={create}>
        <input name="name" required placeholder="Key name" />
        <input name="realmId" placeholder="Realm (empty: admin key)" />
        <button type="submit">Create key</button>
      </form>
      <Problem error={error} />
      {made ? (
        <p class="ok">
          New key, shown this once: <code>{made}</code>
        </p>
      ) : null}
      <Show loaded={keys}>
        {(value) => (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Role</th>
                <th>Realm</th>
                <th>Starts with</th>
                <th>Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {value.keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>{key.role}</td>
                  <td>{key.realmId ?? "—"}</td>
                  <td>
                    <code>{key.hint}</code>
                  </td>
                  <td>{when(key.createdAt)}</td>
                  <td>
                    <Action
                      label="Revoke"
                      kind="danger"
                      run={() =>
                        api(`/api/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" }).then(keys.reload)
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
    </Panel>
  );
}

interface Binding {
  platform: string;
  channelId: string;
  agentId: string;
  realmId: string;
  createdAt: string;
}

function Channels() {
  const bindings = useLoad(() => api<Binding[]>("/api/channels?limit=200"), []);
  const failed = useLoad(
    () =>
      api<{ failed: Array<{ id: string; platform: string; lastError?: string }> }>("/api/channels/failed"),
    [],
  );
  return (
    <Panel title="Channels">
      <ApiForm
        submit="Bind"
        fields={[
          { name: "platform", label: "Platform", placeholder: "slack" },
          { name: "channelId", label: "Channel id", required: true },
          { name: "agentId", label: "Agent id", required: true },
        ]}
        run={(values) => api("/api/channels", { body: values })}
        onDone={bindings.reload}
      />
      <Show
        loaded={bindings}
        empty={(list) => list.length === 0}
        whenEmpty="No channel is bound: POST /api/channels or a file in config/channels/ binds one to an agent."
      >
        {(list) => (
          <ul class="list">
            {list.map((binding) => (
              <li key={`${binding.platform}:${binding.channelId}`}>
                <span>
                  {binding.platform} · {binding.channelId} → {binding.agentId}
                </span>
                <small>
                  {binding.realmId} · {when(binding.createdAt)}
                </small>
              </li>
            ))}
          </ul>
        )}
      </Show>
      {failed.value?.failed.length ? (
        <p class="problem">
          {failed.value.failed.length} replies could not be delivered; the latest:{" "}
          {failed.value.failed.at(-1)?.lastError}
        </p>
      ) : null}
    </Panel>
  );
}

interface Runtime {
  id: string;
  name: string;
  kind: string;
  command?: string;
  url?: string;
  timeoutSecs: number;
}

function Runtimes(props: { admin: boolean }) {
  const runtimes = useLoad(() => api<{ runtimes: Runtime[] }>("/api/bridge/runtimes"), []);
  const runs = useLoad(
    () =>
      api<{
        runs: Array<{
          id: string;
          runtimeId: string;
          status: string;
          startedAt: string;
          error: string | null;
        }>;
      }>("/api/bridge/runs?limit=10"),
    [],
  );
  return (
    <Panel title="Bridge runtimes">
      {props.admin ? (
        <ApiForm
          submit="Register"
          fields={[
            { name: "name", label: "Name", required: true },
            {
              name: "kind",
              label: "Kind",
              options: ["process", "http", "claude_code", "codex", "cursor", "opencode"],
            },
            {
              name: "target",
              label: "Command or URL",
              placeholder: "a command on PATH, or the http runtime's URL",
            },
          ]}
          run={({ name, kind, target }) =>
            api("/api/bridge/runtimes", {
              body: {
                name,
                kind,
                ...(target ? (kind === "http" ? { url: target } : { command: target }) : {}),
              },
            })
          }
          onDone={runtimes.reload}
        />
      ) : null}
      <Show
        loaded={runtimes}
        empty={(value) => value.runtimes.length === 0}
        whenEmpty="No external runtime: an admin registers one with POST /api/bridge/runtimes."
      >
        {(value) => (
          <ul class="list">
            {value.runtimes.map((runtime) => (
              <li key={runtime.id}>
                <span>
                  {runtime.name} <small>{runtime.kind}</small>
                </span>
                <small>
                  {runtime.command ?? runtime.url ?? ""} · timeout {runtime.timeoutSecs} s
                </small>
              </li>
            ))}
          </ul>
        )}
      </Show>
      {runs.value?.runs.length ? (
        <>
          <h3>Recent runs</h3>
          <ul class="list">
            {runs.value.runs.map((run) => (
              <li key={run.id}>
                <span>
                  <Badge value={run.status} /> {run.runtimeId}
                </span>
                <small>
                  {when(run.startedAt)} {run.error ?? ""}
                </small>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </Panel>
  );
}

interface WorkerInfo {
  name: string;
  runtime: string;
  status: "available" | "connected";
  function_count: number;
  connected_at_ms: number;
  ip_address?: string;
  pid?: number;
  active_invocations?: number;
}

/** In-process workers and remote iii workers connected to this node. */
function WorkerTable() {
  const workers = useLoad(() => api<{ workers: WorkerInfo[] }>("/api/workers"), []);
  return (
    <Panel title="Workers" wide>
      <Show loaded={workers}>
        {(value) => (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Where</th>
                <th>Runtime</th>
                <th>Functions</th>
                <th>Since</th>
              </tr>
            </thead>
            <tbody>
              {value.workers.map((worker) => (
                <tr key={`${worker.name}-${worker.connected_at_ms}`}>
                  <td>{worker.name}</td>
                  <td>
                    {worker.status === "connected"
                      ? `remote (iii) ${worker.ip_address ?? ""}${worker.pid ? ` pid ${worker.pid}` : ""}`
                      : "in process"}
                  </td>
                  <td>{worker.runtime}</td>
                  <td>{worker.function_count}</td>
                  <td>{when(new Date(worker.connected_at_ms).toISOString())}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
    </Panel>
  );
}

/** Secret names and times (never their values), and a way to store one. */
function Vault() {
  const secrets = useLoad(() => api<{ keys: Array<{ key: string; updatedAt: string }> }>("/api/vault"), []);
  return (
    <Panel title="Vault">
      <ApiForm
        submit="Store secret"
        fields={[
          { name: "key", label: "Name", required: true, placeholder: "channel:slack:signing_secret" },
          { name: "value", label: "Value", required: true },
        ]}
        run={(values) => api("/api/vault", { body: values })}
        onDone={secrets.reload}
      />
      <Show
        loaded={secrets}
        empty={(value) => value.keys.length === 0}
        whenEmpty="No secrets stored: provider keys and channel secrets go here."
      >
        {(value) => (
          <ul class="list">
            {value.keys.map((secret) => (
              <li key={secret.key}>
                <span>
                  <code>{secret.key}</code>
                </span>
                <small>updated {when(secret.updatedAt)}</small>
                <Action
                  label="Delete"
                  kind="danger"
                  run={() =>
                    api(`/api/vault/${encodeURIComponent(secret.key)}`, { method: "DELETE" }).then(
                      secrets.reload,
                    )
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Show>
    </Panel>
  );
}

interface FileProblem {
  file: string;
  message: string;
}

/** The declarative files (agents/, integrations/, channels, workflows) loaded again, and what the integrations are. */
function Configuration() {
  const integrations = useLoad(
    () =>
      api<{ integrations: Array<{ name: string; status: string; functions: string[]; error?: string }> }>(
        "/api/integrations",
      ),
    [],
  );
  const [report, setReport] = useState<{ problems: FileProblem[]; summary: string }>();
  const reload = async () => {
    const result = await api<{
      agents: { created: string[]; updated: string[] };
      workflows: { loaded: string[] };
      problems: FileProblem[];
    }>("/api/config/reload", { body: {} });
    setReport({
      problems: result.problems,
      summary: `agents created ${result.agents.created.length}, updated ${result.agents.updated.length}; workflows loaded ${result.workflows.loaded.length}`,
    });
    integrations.reload();
  };
  return (
    <Panel title="Configuration and integrations">
      <Action label="Reload the declarative files" run={reload} />
      {report ? (
        <div role="status">
          <p class="ok">{report.summary}</p>
          {report.problems.map((problem) => (
            <p key={problem.file} class="problem">
              {problem.file}: {problem.message}
            </p>
          ))}
        </div>
      ) : null}
      <Show
        loaded={integrations}
        empty={(value) => value.integrations.length === 0}
        whenEmpty="No integrations: an MCP server declared in integrations/*.toml adds its tools."
      >
        {(value) => (
          <ul class="list">
            {value.integrations.map((entry) => (
              <li key={entry.name}>
                <span>
                  {entry.name} <Badge value={entry.status} />
                </span>
                <small>{entry.error ?? `${entry.functions.length} tools`}</small>
              </li>
            ))}
          </ul>
        )}
      </Show>
    </Panel>
  );
}
