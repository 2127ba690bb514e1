import { api } from "../../api.ts";
import { preview, when } from "../../lib/format.ts";
import type { Answer } from "../../types.ts";
import { Action, ApiForm, Badge, Panel, Show, useLoad } from "../../ui.tsx";

export function Channels() {
  const bindings = useLoad(() => api<Answer<"channel::bindings">>("/api/channels?limit=200"), []);
  const failed = useLoad(() => api<Answer<"channel::failed">>("/api/channels/failed"), []);
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
                <span class="row-actions">
                  <Action
                    label="Unbind"
                    run={() =>
                      api(
                        `/api/channels/${encodeURIComponent(binding.platform)}/${encodeURIComponent(binding.channelId)}`,
                        { method: "DELETE" },
                      ).then(bindings.reload)
                    }
                  />
                </span>
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

export function Runtimes(props: { admin: boolean }) {
  const runtimes = useLoad(() => api<Answer<"bridge::list">>("/api/bridge/runtimes"), []);
  const runs = useLoad(() => api<Answer<"bridge::runs">>("/api/bridge/runs?limit=10"), []);
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
                <ApiForm
                  submit="Invoke"
                  fields={[
                    { name: "prompt", label: `Prompt for ${runtime.name}`, placeholder: "what to do" },
                  ]}
                  run={({ prompt }) =>
                    api("/api/bridge/invoke", {
                      body: { runtimeId: runtime.id, ...(prompt ? { prompt } : {}) },
                    })
                  }
                  onDone={runs.reload}
                />
              </li>
            ))}
          </ul>
        )}
      </Show>
      {runs.value?.runs.length ? (
        <>
          <h3>
            Recent runs <Action label="Refresh" run={async () => runs.reload()} />
          </h3>
          <ul class="list">
            {runs.value.runs.map((run) => (
              <li key={run.id}>
                <span>
                  <Badge value={run.status} /> {run.runtimeId}
                </span>
                <small>
                  {when(run.startedAt)} {run.error ?? ""}
                  {run.output === null || run.output === undefined ? "" : ` · ${preview(run.output, 200)}`}
                </small>
                {run.status === "running" ? (
                  <span class="row-actions">
                    <Action
                      label="Cancel"
                      kind="danger"
                      run={() =>
                        api(`/api/bridge/runs/${encodeURIComponent(run.id)}/cancel`, { body: {} }).then(
                          runs.reload,
                        )
                      }
                    />
                  </span>
                ) : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </Panel>
  );
}
