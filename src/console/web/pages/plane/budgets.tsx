import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import { percent } from "../../lib/format.ts";
import type { Agent, Answer } from "../../types.ts";
import { ApiForm, Empty, Panel, Show, useLoad } from "../../ui.tsx";

type Check = Answer<"ledger::check">;

type Summary = Answer<"ledger::summary">;

/** The last `count` calendar months, oldest first, as the ledger names them (YYYY-MM, UTC). */
export function lastMonths(now: Date, count: number): string[] {
  const months: string[] = [];
  for (let back = count - 1; back >= 0; back--) {
    const date = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
    months.push(`${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, "0")}`);
  }
  return months;
}

const cents = (value: number) => `$${(value / 100).toFixed(value < 100 ? 4 : 2)}`;

/** Each agent's budget use as a bar, and the ledger by agent, by model and month by month. */
export function Budgets(props: { realmId: string; agents: Agent[] }) {
  const realm = encodeURIComponent(props.realmId);
  const checks = useLoad(
    () =>
      Promise.all(
        props.agents.map(async (agent) => ({
          agent,
          check: await api<Check>(`/api/ledger/check/${realm}/${encodeURIComponent(agent.id)}`),
        })),
      ),
    [props.realmId, props.agents.length],
  );
  const [groupBy, setGroupBy] = useState("agent");
  const summary = useLoad(
    () => api<Summary>(`/api/ledger/summary/${realm}?groupBy=${groupBy}`),
    [props.realmId, groupBy],
  );
  const months = lastMonths(new Date(), 6);
  const history = useLoad(
    () => Promise.all(months.map((period) => api<Summary>(`/api/ledger/summary/${realm}?period=${period}`))),
    [props.realmId],
  );
  const names = new Map(props.agents.map((agent) => [agent.id, agent.name]));
  return (
    <div class="grid">
      <Panel title="Budgets this month">
        <ApiForm
          submit="Set budget"
          fields={[
            {
              name: "agentId",
              label: "For",
              options: ["the whole realm", ...props.agents.map((agent) => agent.name)],
            },
            { name: "dollars", label: "Monthly limit (USD)", kind: "number", required: true },
          ]}
          run={({ agentId, dollars }) => {
            const agent = props.agents.find((entry) => entry.name === agentId);
            return api("/api/ledger/budget", {
              body: {
                realmId: props.realmId,
                ...(agent ? { agentId: agent.id } : {}),
                monthlyCents: Math.round(Number(dollars) * 100),
              },
            });
          }}
          onDone={checks.reload}
        />
        <Show loaded={checks} empty={(list) => list.length === 0} whenEmpty="No agents in this realm.">
          {(list) => (
            <ul class="bars">
              {list.map(({ agent, check }) => (
                <li key={agent.id}>
                  <div class="bar-label">
                    <span>{agent.name}</span>
                    <small>
                      {check.scope === null
                        ? "no budget"
                        : `${cents(check.spentCents)} of ${cents(check.limitCents)} (${check.scope})`}
                    </small>
                  </div>
                  <meter
                    class="budget"
                    aria-label={`${agent.name} budget`}
                    min={0}
                    max={100}
                    high={80}
                    optimum={0}
                    value={percent(check.spentCents, check.limitCents)}
                  />
                </li>
              ))}
            </ul>
          )}
        </Show>
      </Panel>
      <Panel title="Spend">
        <select
          value={groupBy}
          onChange={(event) => setGroupBy(event.currentTarget.value)}
          aria-label="Group by"
        >
          <option value="agent">by agent</option>
          <option value="model">by model</option>
          <option value="provider">by provider</option>
          <option value="billing_code">by billing code</option>
        </select>
        <Show loaded={summary}>
          {(value) =>
            value.eventCount === 0 ? (
              <Empty>Nothing spent yet.</Empty>
            ) : (
              <BarChart
                rows={Object.entries(value.breakdown).map(([key, amount]) => [names.get(key) ?? key, amount])}
              />
            )
          }
        </Show>
      </Panel>
      <Panel title="Spend by month" wide>
        <Show loaded={history}>
          {(list) => (
            <BarChart rows={list.map((value, index) => [months[index] as string, value.totalCents])} />
          )}
        </Show>
      </Panel>
    </div>
  );
}

function BarChart(props: { rows: Array<[string, number]> }) {
  const most = Math.max(0, ...props.rows.map(([, value]) => value));
  return (
    <ul class="bars">
      {props.rows.map(([label, value]) => (
        <li key={label}>
          <div class="bar-label">
            <span>{label}</span>
            <small>{cents(value)}</small>
          </div>
          <div class="meter">
            <div class="fill" style={{ width: `${percent(value, most)}%` }} />
          </div>
        </li>
      ))}
    </ul>
  );
}
