import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import { when } from "../../lib/format.ts";
import { Table } from "../../table.tsx";
import type { Agent, Answer } from "../../types.ts";
import { Action, ApiForm, Badge, Panel, Show, useLoad } from "../../ui.tsx";

type Swarm = Answer<"swarm::status">;
type Consensus = Answer<"swarm::consensus">;

/** A realm's swarms: start one, follow its messages, speak for a member, ask for consensus, run, dissolve. */
export function Swarms(props: { realmId: string; agents: Agent[] }) {
  const realm = encodeURIComponent(props.realmId);
  const swarms = useLoad(() => api<Answer<"swarm::list">>(`/api/swarm?realmId=${realm}&limit=100`), [realm]);
  const [open, setOpen] = useState<string>();
  const idOf = (name: string) => props.agents.find((agent) => agent.name === name)?.id ?? name;
  const nameOf = (id: string) => props.agents.find((agent) => agent.id === id)?.name ?? id;
  const start = (
    <ApiForm
      submit="Start swarm"
      fields={[
        { name: "goal", label: "Goal", required: true, placeholder: "what the members should agree on" },
        {
          name: "members",
          label: "Members",
          kind: "checks",
          options: props.agents.map((agent) => agent.name),
        },
        { name: "minutes", label: "Minutes (10)", kind: "number", placeholder: "10" },
        { name: "threshold", label: "Threshold (0.66)", kind: "number", placeholder: "0.66" },
      ]}
      run={async ({ goal, members, minutes, threshold }) => {
        const created = await api<Swarm>("/api/swarm/create", {
          body: {
            realmId: props.realmId,
            goal,
            agentIds: members ? members.split("\n").map(idOf) : [],
            ...(minutes ? { maxDurationMs: Math.round(Number(minutes) * 60_000) } : {}),
            ...(threshold ? { consensusThreshold: Number(threshold) } : {}),
          },
        });
        setOpen(created.swarmId);
      }}
      onDone={swarms.reload}
    />
  );
  return (
    <div class="grid">
      <Panel title="Swarms" wide>
        {props.agents.length > 0 ? start : null}
        <Show
          loaded={swarms}
          empty={(value) => value.swarms.length === 0}
          whenEmpty={
            props.agents.length
              ? "No swarms yet: start one above with a goal and its members."
              : "No swarms, and no agents to form one: create agents in this realm first."
          }
        >
          {(value) => (
            <Table
              rows={value.swarms}
              rowKey={(swarm) => swarm.swarmId}
              rowClass={(swarm) => (swarm.swarmId === open ? "selected" : "")}
              columns={[
                {
                  head: "Goal",
                  cell: (swarm) => (
                    <button type="button" class="link" onClick={() => setOpen(swarm.swarmId)}>
                      {swarm.goal}
                    </button>
                  ),
                },
                { head: "Status", cell: (swarm) => <Badge value={swarm.status} /> },
                { head: "Members", cell: (swarm) => swarm.agentIds.map(nameOf).join(", ") },
                { head: "Messages", cell: (swarm) => swarm.messageCount },
                {
                  head: "Expires",
                  cell: (swarm) => (swarm.endedAt ? `ended ${when(swarm.endedAt)}` : when(swarm.expiresAt)),
                },
              ]}
            />
          )}
        </Show>
      </Panel>
      {open ? <SwarmView key={open} swarmId={open} nameOf={nameOf} onChange={swarms.reload} /> : null}
    </div>
  );
}

function SwarmView(props: { swarmId: string; nameOf: (id: string) => string; onChange: () => void }) {
  const path = `/api/swarm/${encodeURIComponent(props.swarmId)}`;
  const swarm = useLoad(() => api<Swarm>(`${path}/status`), [path]);
  const messages = useLoad(() => api<Answer<"swarm::collect">>(`${path}/collect`), [path]);
  const [consensus, setConsensus] = useState<Consensus>();
  const refresh = () => {
    swarm.reload();
    messages.reload();
    props.onChange();
  };
  return (
    <Panel title="Swarm" wide>
      <Show loaded={swarm}>
        {(current) => (
          <>
            <dl class="facts">
              <dt>Goal</dt>
              <dd>{current.goal}</dd>
              <dt>Status</dt>
              <dd>
                <Badge value={current.status} /> {current.messageCount} messages, consensus at{" "}
                {Math.round(current.consensusThreshold * 100)} %
              </dd>
            </dl>
            {current.status === "active" ? (
              <>
                <ApiForm
                  submit="Broadcast"
                  fields={[
                    { name: "agent", label: "As", options: current.agentIds.map(props.nameOf) },
                    { name: "type", label: "Type", options: ["observation", "proposal", "vote"] },
                    { name: "vote", label: "Vote (for votes)", options: ["for", "against", "abstain"] },
                    { name: "message", label: "Message", required: true },
                  ]}
                  run={({ agent, type, vote, message }) =>
                    api(`${path}/broadcast`, {
                      body: {
                        agentId: current.agentIds.find((id) => props.nameOf(id) === agent) ?? agent,
                        type,
                        message,
                        ...(type === "vote" ? { vote } : {}),
                      },
                    })
                  }
                  onDone={refresh}
                />
                <span class="actions">
                  <Action
                    label="Run 3 rounds"
                    kind="primary"
                    run={async () => {
                      const ran = await api<Answer<"swarm::run">>(`${path}/run`, { body: {} });
                      setConsensus(ran.consensus);
                      refresh();
                    }}
                  />
                  <Action
                    label="Dissolve"
                    kind="danger"
                    run={async () => {
                      await api(`${path}/dissolve`, { body: {} });
                      refresh();
                    }}
                  />
                </span>
              </>
            ) : null}
            <ApiForm
              submit="Check consensus"
              fields={[{ name: "proposal", label: "Proposal", required: true, placeholder: "as voted on" }]}
              run={async ({ proposal }) =>
                setConsensus(await api<Consensus>(`${path}/consensus`, { body: { proposal } }))
              }
            />
            {consensus ? (
              <p class={consensus.hasConsensus ? "ok" : "problem"} role="status">
                “{consensus.proposal}”: {consensus.hasConsensus ? "consensus" : "no consensus"} —{" "}
                {consensus.votesFor} for, {consensus.votesAgainst} against of {consensus.totalVoters} voters
                (threshold {consensus.threshold})
              </p>
            ) : null}
          </>
        )}
      </Show>
      <Show
        loaded={messages}
        empty={(value) => value.totalMessages === 0}
        whenEmpty="No messages yet: members broadcast observations, proposals and votes."
      >
        {(value) => (
          <ol class="list">
            {[...value.observations, ...value.proposals, ...value.votes]
              .sort((a, b) => a.seq - b.seq)
              .map((message) => (
                <li key={message.seq}>
                  <span>
                    <Badge value={message.type} /> <strong>{props.nameOf(message.agentId)}</strong>{" "}
                    {message.vote ? `(${message.vote}) ` : ""}
                    {message.message}
                  </span>
                  <small>{when(message.at)}</small>
                </li>
              ))}
          </ol>
        )}
      </Show>
    </Panel>
  );
}
