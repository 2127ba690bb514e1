import { useEffect } from "preact/hooks";
import { api, stream } from "../api.ts";
import { duration, preview, when } from "../lib/format.ts";
import { href } from "../router.ts";
import type { Run } from "../types.ts";
import { Action, Badge, Empty, Page, Panel, Show, useLoad } from "../ui.tsx";

/** A run's step timeline, followed live while it runs (the run's event stream). */
export function RunPage(props: { id: string }) {
  const path = `/api/workflows/runs/${encodeURIComponent(props.id)}`;
  const run = useLoad(() => api<Run>(path), [props.id]);
  const running = run.value?.status === "running";
  useEffect(() => {
    if (!running) return;
    const stop = new AbortController();
    (async () => {
      for await (const _event of stream(`${path}/events`, { signal: stop.signal })) run.reload();
    })().catch(() => undefined);
    return () => stop.abort();
  }, [props.id, running]);
  return (
    <Show loaded={run}>
      {(value) => (
        <Page
          title={`Run ${value.runId}`}
          actions={
            value.status === "running" ? (
              <Action
                label="Cancel"
                kind="danger"
                run={() => api(`${path}/cancel`, { body: {} }).then(run.reload)}
              />
            ) : ["failed", "interrupted", "cancelled"].includes(value.status) ? (
              <Action label="Retry" run={() => api(`${path}/retry`, { body: {} }).then(run.reload)} />
            ) : null
          }
        >
          <Panel title="Status" wide>
            <p>
              <Badge value={value.status} /> workflow{" "}
              <a href={href("workflows", value.workflowId, value.realmId ?? "")}>{value.workflowId}</a> ·
              started {when(value.startedAt)}
              {value.finishedAt
                ? ` · took ${duration(Date.parse(value.finishedAt) - Date.parse(value.startedAt))}`
                : ""}
            </p>
            {value.error ? <p class="problem">{value.error}</p> : null}
          </Panel>
          <Panel title="Timeline" wide>
            <Timeline run={value} />
          </Panel>
        </Page>
      )}
    </Show>
  );
}

function Timeline(props: { run: Run }) {
  const { results } = props.run;
  if (results.length === 0) return <Empty>No step has finished yet.</Empty>;
  const longest = Math.max(1, ...results.map((result) => result.durationMs));
  return (
    <ol class="timeline">
      {results.map((result, index) => (
        <li
          key={`${result.stepName}-${index}`}
          class={result.error ? "failed" : result.skipped ? "skipped" : "ok"}
        >
          <div class="step">
            <b>{result.stepName}</b>
            <span>{result.skipped ? "skipped" : duration(result.durationMs)}</span>
          </div>
          <div class="bar" style={{ width: `${Math.max(2, (result.durationMs / longest) * 100)}%` }} />
          {result.error ? (
            <div class="problem">{result.error}</div>
          ) : (
            <code>{preview(result.output, 300)}</code>
          )}
        </li>
      ))}
    </ol>
  );
}
