import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import { when } from "../../lib/format.ts";
import { Table } from "../../table.tsx";
import type { Answer, Item } from "../../types.ts";
import { Action, Badge, Panel, Show, useLoad } from "../../ui.tsx";

/** In-process workers and remote iii workers connected to this node. */
export function WorkerTable() {
  const workers = useLoad(() => api<Answer<"api::workers">>("/api/workers"), []);
  return (
    <Panel title="Workers" wide>
      <Show loaded={workers}>
        {(value) => (
          <Table
            rows={value.workers}
            rowKey={(worker) => `${worker.name}-${worker.connected_at_ms}`}
            columns={[
              { head: "Name", cell: (worker) => worker.name },
              {
                head: "Where",
                cell: (worker) =>
                  worker.status === "connected"
                    ? `remote (iii) ${worker.ip_address ?? ""}${worker.pid ? ` pid ${worker.pid}` : ""}`
                    : "in process",
              },
              { head: "Runtime", cell: (worker) => worker.runtime },
              { head: "Functions", cell: (worker) => worker.function_count },
              { head: "Since", cell: (worker) => when(new Date(worker.connected_at_ms).toISOString()) },
            ]}
          />
        )}
      </Show>
    </Panel>
  );
}

export type FunctionInfo = Item<Answer<"api::functions">["functions"]>;

export function Workers(props: { functions: FunctionInfo[] }) {
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

type FileProblem = Item<Answer<"config::reload">["problems"]>;

/** The declarative files (agents/, integrations/, channels, workflows) loaded again, and what the integrations are. */
export function Configuration() {
  const integrations = useLoad(() => api<Answer<"integration::list">>("/api/integrations"), []);
  const [report, setReport] = useState<{ problems: FileProblem[]; summary: string }>();
  const reload = async () => {
    const result = await api<Answer<"config::reload">>("/api/config/reload", { body: {} });
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

/** The model providers: which can be used now, and a one-token request through one to prove it. */
export function Providers() {
  const providers = useLoad(() => api<Answer<"catalog::providers">>("/api/providers"), []);
  const [tested, setTested] = useState<Record<string, Answer<"catalog::test_provider">>>({});
  const test = async (id: string) => {
    const result = await api<Answer<"catalog::test_provider">>(
      `/api/providers/${encodeURIComponent(id)}/test`,
      {
        body: {},
      },
    );
    setTested((before) => ({ ...before, [id]: result }));
  };
  return (
    <Panel title="Model providers" wide>
      <Show loaded={providers}>
        {(value) => (
          <Table
            // The usable ones first: the rest only say which key or endpoint they wait for.
            rows={[...value.providers].sort((a, b) => Number(b.available) - Number(a.available))}
            rowKey={(provider) => provider.id}
            columns={[
              {
                head: "Provider",
                cell: (provider) => (
                  <>
                    {provider.name} <small>{provider.local ? "local" : provider.driver}</small>
                  </>
                ),
              },
              { head: "Endpoint", cell: (provider) => <code>{provider.baseUrl}</code> },
              {
                head: "Usable",
                cell: (provider) => (
                  <>
                    <Badge value={provider.available ? "available" : "unavailable"} /> {provider.reason ?? ""}
                  </>
                ),
              },
              {
                head: "Test",
                cell: (provider) => {
                  const result = tested[provider.id];
                  return (
                    <>
                      {provider.available ? <Action label="Test" run={() => test(provider.id)} /> : "—"}{" "}
                      {result
                        ? result.ok
                          ? `answered in ${result.latencyMs} ms (${result.model})`
                          : `failed: ${result.error ?? "no answer"}`
                        : ""}
                    </>
                  );
                },
              },
            ]}
          />
        )}
      </Show>
    </Panel>
  );
}
