import { api, apiText } from "../api.ts";
import { duration } from "../lib/format.ts";
import { metricTotals } from "../lib/metrics.ts";
import type { Answer } from "../types.ts";
import { Badge, Page, Panel, Show, useLoad } from "../ui.tsx";
import { Channels, Runtimes } from "./operations/delivery.tsx";
import { Audit, Keys, Vault } from "./operations/security.tsx";
import { Configuration, Providers, Workers, WorkerTable } from "./operations/system.tsx";

type Health = Answer<"api::health">;

export function OperationsPage(props: { admin: boolean }) {
  const health = useLoad(() => api<Health>("/api/health"), []);
  const functions = useLoad(() => api<Answer<"api::functions">>("/api/functions"), []);
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
        <Providers />
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
