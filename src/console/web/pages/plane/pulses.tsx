import { ApiError, api } from "../../api.ts";
import { duration, preview, when } from "../../lib/format.ts";
import type { Agent, Answer } from "../../types.ts";
import { Action, ApiForm, Badge, Empty, Panel, Show, useLoad } from "../../ui.tsx";

type PulseStatus = Answer<"pulse::status">;

/** Each agent's pulse: its schedule, when it fires next, how its latest tick went and its recent runs. */
export function Pulses(props: { realmId: string; agents: Agent[] }) {
  const realm = encodeURIComponent(props.realmId);
  const pulses = useLoad(
    () =>
      Promise.all(
        props.agents.map(async (agent) => ({
          agent,
          status: await api<PulseStatus>(`/api/pulse/${realm}/${encodeURIComponent(agent.id)}?limit=5`).catch(
            (error: unknown) => {
              if (error instanceof ApiError && error.status === 404) return null;
              throw error;
            },
          ),
        })),
      ),
    [props.realmId, props.agents.length],
  );
  const register = (
    <ApiForm
      submit="Schedule"
      fields={[
        { name: "agent", label: "Agent", options: props.agents.map((agent) => agent.name) },
        { name: "cron", label: "Cron (six fields, UTC)", required: true, placeholder: "0 */15 * * * *" },
      ]}
      run={({ agent, cron }) => {
        const agentId = props.agents.find((entry) => entry.name === agent)?.id;
        return api("/api/pulse/register", { body: { realmId: props.realmId, agentId, cron } });
      }}
      onDone={pulses.reload}
    />
  );
  return (
    <>
      {props.agents.length > 0 ? register : null}
      <Show loaded={pulses}>
        {(list) => {
          const withPulse = list.filter((entry) => entry.status !== null);
          if (withPulse.length === 0)
            return <Empty>No agent has a pulse: POST /api/pulse/register schedules one.</Empty>;
          return (
            <div class="grid">
              {withPulse.map(({ agent, status }) => (
                <Panel key={agent.id} title={agent.name}>
                  <dl class="facts">
                    <dt>Schedule</dt>
                    <dd>
                      <code>{status?.config?.cron ?? "—"}</code>{" "}
                      {status?.config?.enabled ? "" : <Badge value="paused" />}
                    </dd>
                    <dt>Next</dt>
                    <dd>{when(status?.nextFireAt)}</dd>
                    <dt>Last tick</dt>
                    <dd>
                      {status?.lastTick
                        ? `${status.lastTick.outcome}${status.lastTick.reason ? ` (${status.lastTick.reason})` : ""} · ${when(status.lastTick.at)}`
                        : "—"}
                    </dd>
                  </dl>
                  <Action
                    label={status?.config?.enabled ? "Pause" : "Resume"}
                    run={() =>
                      api(`/api/pulse/${realm}/${encodeURIComponent(agent.id)}`, {
                        method: "PATCH",
                        body: { enabled: !status?.config?.enabled },
                      }).then(pulses.reload)
                    }
                  />
                  <Action
                    label="Wake now"
                    run={() =>
                      api("/api/pulse/invoke", { body: { realmId: props.realmId, agentId: agent.id } }).then(
                        pulses.reload,
                      )
                    }
                  />
                  <ul class="list">
                    {(status?.recentRuns ?? []).map((run) => (
                      <li key={run.id}>
                        <span>
                          <Badge value={run.status} /> {run.source} · {when(run.startedAt)}
                          {run.finishedAt
                            ? ` · ${duration(Date.parse(run.finishedAt) - Date.parse(run.startedAt))}`
                            : ""}
                        </span>
                        <small>{preview(run.output ?? run.error ?? "", 160)}</small>
                      </li>
                    ))}
                  </ul>
                </Panel>
              ))}
            </div>
          );
        }}
      </Show>
    </>
  );
}
