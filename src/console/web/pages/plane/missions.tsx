import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import { when } from "../../lib/format.ts";
import type { Agent, Answer, Item } from "../../types.ts";
import { Action, ApiForm, Badge, Empty, Problem, Show, useLoad } from "../../ui.tsx";

const STATUSES = ["backlog", "queued", "active", "review", "complete", "blocked", "cancelled"] as const;

/** Where a mission usually goes from each status: the move offered first. */
const NEXT: Record<(typeof STATUSES)[number], (typeof STATUSES)[number]> = {
  backlog: "queued",
  queued: "active",
  active: "review",
  review: "complete",
  complete: "backlog",
  blocked: "queued",
  cancelled: "backlog",
};

type Mission = Item<Answer<"mission::list">["missions"]>;

/** Missions as a board, a column per status; a card is checked out to an agent or moved on. */
export function Missions(props: { realmId: string; agents: Agent[] }) {
  const base = `/api/missions/${encodeURIComponent(props.realmId)}`;
  const missions = useLoad(() => api<Answer<"mission::list">>(`${base}?limit=200`), [props.realmId]);
  const [error, setError] = useState<string>();
  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const title = String(new FormData(form).get("title") ?? "").trim();
    setError(undefined);
    try {
      await api("/api/missions", { body: { realmId: props.realmId, title, createdBy: "console" } });
      form.reset();
      missions.reload();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <>
      <form class="inline" onSubmit={create}>
        <input name="title" required placeholder="New mission title" aria-label="New mission title" />
        <button type="submit">Add mission</button>
      </form>
      <Problem error={error} />
      <Show loaded={missions}>
        {({ missions: list }) => (
          <div class="board">
            {STATUSES.map((status) => (
              <section key={status} class="column" aria-label={status}>
                <h3>
                  {status} <small>{list.filter((mission) => mission.status === status).length}</small>
                </h3>
                {list
                  .filter((mission) => mission.status === status)
                  .map((mission) => (
                    <Card
                      key={mission.id}
                      mission={mission}
                      agents={props.agents}
                      base={base}
                      onChange={missions.reload}
                    />
                  ))}
              </section>
            ))}
          </div>
        )}
      </Show>
      {props.agents.length === 0 ? (
        <Empty>This realm has no agents to check missions out to yet.</Empty>
      ) : null}
    </>
  );
}

function Card(props: { mission: Mission; agents: Agent[]; base: string; onChange: () => void }) {
  const { mission } = props;
  const path = `${props.base}/${encodeURIComponent(mission.id)}`;
  const [agentId, setAgentId] = useState(props.agents[0]?.id ?? "");
  const [next, setNext] = useState<string>(NEXT[mission.status]);
  return (
    <article class="card">
      <b>{mission.title}</b>
      <small>
        <Badge value={mission.priority} />{" "}
        {mission.assigneeId
          ? `· ${props.agents.find((agent) => agent.id === mission.assigneeId)?.name ?? mission.assigneeId}`
          : "· unassigned"}
      </small>
      {mission.assigneeId ? (
        <div class="card-actions">
          <Action
            label="Release"
            run={() => api(`${path}/release`, { body: { agentId: mission.assigneeId } }).then(props.onChange)}
          />
        </div>
      ) : null}
      {mission.assigneeId === null && props.agents.length > 0 ? (
        <div class="card-actions">
          <select
            value={agentId}
            onChange={(event) => setAgentId(event.currentTarget.value)}
            aria-label="Agent"
          >
            {props.agents.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
          <Action
            label="Check out"
            run={() => api(`${path}/checkout`, { body: { agentId } }).then(props.onChange)}
          />
        </div>
      ) : null}
      <Comments path={path} count={mission.commentCount} />
      <div class="card-actions">
        <select value={next} onChange={(event) => setNext(event.currentTarget.value)} aria-label="Move to">
          {STATUSES.filter((status) => status !== mission.status).map((status) => (
            <option key={status}>{status}</option>
          ))}
        </select>
        <Action
          label="Move"
          run={() =>
            api(`${path}/transition`, {
              body: {
                status: next,
                expectedVersion: mission.version,
                ...(mission.assigneeId ? { agentId: mission.assigneeId } : {}),
              },
            }).then(props.onChange)
          }
        />
      </div>
    </article>
  );
}

/** A mission's comments, read when opened, and a way to add one. */
function Comments(props: { path: string; count: number }) {
  const [open, setOpen] = useState(false);
  const [round, setRound] = useState(0);
  const mission = useLoad<Pick<Answer<"mission::get">, "comments">>(
    () => (open ? api<Answer<"mission::get">>(props.path) : Promise.resolve({ comments: [] })),
    [open, round],
  );
  return (
    <details onToggle={(event) => setOpen((event.currentTarget as HTMLDetailsElement).open)}>
      <summary>{props.count} comments</summary>
      <ul class="list">
        {(mission.value?.comments ?? []).map((comment) => (
          <li key={comment.id}>
            <span>{comment.body}</span>
            <small>
              {comment.authorId} · {when(comment.createdAt)}
            </small>
          </li>
        ))}
      </ul>
      <ApiForm
        submit="Comment"
        fields={[{ name: "body", label: "Comment", required: true }]}
        run={({ body }) => api(`${props.path}/comments`, { body: { authorId: "console", body } })}
        onDone={() => setRound((n) => n + 1)}
      />
    </details>
  );
}
