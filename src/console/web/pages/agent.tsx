import { useEffect, useState } from "preact/hooks";
import { api } from "../api.ts";
import { preview, when } from "../lib/format.ts";
import type { Agent, Message, Session } from "../types.ts";
import { Action, ApiForm, Badge, Empty, Page, Panel, Problem, Show, useLoad } from "../ui.tsx";
import { Chat } from "./chat.tsx";

export function AgentPage(props: { id: string }) {
  const agent = useLoad(() => api<Agent>(`/api/agents/${encodeURIComponent(props.id)}`), [props.id]);
  const [sessionId, setSessionId] = useState<string>();
  // Each finished turn changes the sessions' counts: they are read again.
  const [turns, setTurns] = useState(0);
  return (
    <Show loaded={agent}>
      {(value) => (
        <Page
          title={value.name}
          actions={
            <Action
              label="Delete"
              kind="danger"
              run={async () => {
                if (!confirm(`Delete ${value.name} with its sessions and memory?`)) return;
                await api(`/api/agents/${encodeURIComponent(value.id)}`, { method: "DELETE" });
                location.hash = "#/agents";
              }}
            />
          }
        >
          <div class="grid">
            <Panel title="Configuration">
              <dl class="facts">
                <dt>Id</dt>
                <dd>{value.id}</dd>
                <dt>Model</dt>
                <dd>{value.model}</dd>
                <dt>Realm</dt>
                <dd>{value.realmId}</dd>
                <dt>Status</dt>
                <dd>
                  <Badge value={value.status} />
                </dd>
                <dt>Tool profile</dt>
                <dd>{value.toolProfile}</dd>
                <dt>Capabilities</dt>
                <dd>{value.capabilities?.join(", ") || "—"}</dd>
                <dt>Tools</dt>
                <dd class="tools">{(value.resolvedTools ?? []).join(" ") || "none"}</dd>
              </dl>
              {value.systemPrompt ? <pre class="prompt">{value.systemPrompt}</pre> : null}
              <details>
                <summary>Change</summary>
                <ApiForm
                  submit="Save"
                  fields={[
                    { name: "model", label: "Model", placeholder: value.model },
                    {
                      name: "systemPrompt",
                      label: "System prompt",
                      kind: "textarea",
                      placeholder: value.systemPrompt ?? "",
                    },
                  ]}
                  run={({ model, systemPrompt }) =>
                    api(`/api/agents/${encodeURIComponent(value.id)}`, {
                      method: "PATCH",
                      body: { ...(model ? { model } : {}), ...(systemPrompt ? { systemPrompt } : {}) },
                    })
                  }
                  onDone={agent.reload}
                />
              </details>
            </Panel>
            <Panel title="Chat" wide>
              <Chat
                agentId={value.id}
                sessionId={sessionId}
                onSession={setSessionId}
                onTurn={() => setTurns((n) => n + 1)}
              />
            </Panel>
            <Sessions agentId={value.id} onOpen={setSessionId} open={sessionId} turns={turns} />
            <Memory agentId={value.id} />
            <Approvals agentId={value.id} />
          </div>
        </Page>
      )}
    </Show>
  );
}

function Sessions(props: { agentId: string; open?: string; turns: number; onOpen: (id: string) => void }) {
  const base = `/api/agents/${encodeURIComponent(props.agentId)}/sessions`;
  const sessions = useLoad(
    () => api<{ sessions: Session[] }>(`${base}?limit=50`),
    [props.agentId, props.open, props.turns],
  );
  const history = useLoad(
    () =>
      props.open
        ? api<{ messages: Message[] }>(`${base}/${encodeURIComponent(props.open)}?limit=200`)
        : Promise.resolve({ messages: [] }),
    [props.agentId, props.open, props.turns],
  );
  return (
    <Panel title="Sessions">
      <Show
        loaded={sessions}
        empty={(value) => value.sessions.length === 0}
        whenEmpty="No sessions yet: a chat starts one."
      >
        {(value) => (
          <ul class="list">
            {value.sessions.map((session) => (
              <li key={session.id} class={session.id === props.open ? "selected" : ""}>
                <button type="button" class="link" onClick={() => props.onOpen(session.id)}>
                  {session.title || session.id}
                </button>
                <small>
                  {session.messageCount} messages · {when(session.updatedAt)}
                </small>
              </li>
            ))}
          </ul>
        )}
      </Show>
      {props.open ? (
        <Show loaded={history}>
          {(value) => (
            <ol class="history">
              {value.messages.map((message, index) => (
                <li key={`${message.createdAt}-${index}`} class={message.role}>
                  <b>{message.role}</b> {message.content}
                  {(message.toolCalls ?? []).map((call) => (
                    <div key={call.toolCallId} class="tool">
                      {call.toolName}({preview(call.input, 80)}) → {preview(call.output, 120)}
                    </div>
                  ))}
                </li>
              ))}
            </ol>
          )}
        </Show>
      ) : null}
    </Panel>
  );
}

interface Hit {
  id: string;
  role: string;
  content: string;
  score: number;
  createdAt: string;
}

function Memory(props: { agentId: string }) {
  const [hits, setHits] = useState<Hit[]>();
  const [error, setError] = useState<string>();
  const search = async (event: Event) => {
    event.preventDefault();
    const query = String(new FormData(event.currentTarget as HTMLFormElement).get("query") ?? "").trim();
    if (!query) return;
    setError(undefined);
    try {
      const found = await api<{ results: Hit[] }>(`/api/agents/${encodeURIComponent(props.agentId)}/memory`, {
        body: { query, limit: 20 },
      });
      setHits(found.results);
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <Panel title="Memory">
      <form class="inline" onSubmit={search}>
        <input name="query" placeholder="Search what the agent remembers" />
        <button type="submit">Search</button>
      </form>
      <Problem error={error} />
      {hits === undefined ? null : hits.length === 0 ? (
        <Empty>Nothing matches. The agent remembers its conversations as they happen.</Empty>
      ) : (
        <ul class="list">
          {hits.map((hit) => (
            <li key={hit.id}>
              <small>
                {hit.role} · score {hit.score.toFixed(2)} · {when(hit.createdAt)}
              </small>
              <div>{preview(hit.content, 300)}</div>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}

interface Approval {
  callId: string;
  functionId: string;
  input: unknown;
  status: string;
  createdAt: string;
}

/** Tool calls of the agent that wait for a person's approval (admin keys decide). */
function Approvals(props: { agentId: string }) {
  const base = `/api/agents/${encodeURIComponent(props.agentId)}/approvals`;
  const pending = useLoad(() => api<{ approvals: Approval[] }>(`${base}?status=pending`), [props.agentId]);
  // A turn may stop at a risky call at any time: what waits is looked for every two seconds.
  useEffect(() => {
    const timer = setInterval(pending.reload, 2000);
    return () => clearInterval(timer);
  }, [pending.reload]);
  const decide = (callId: string, approve: boolean) =>
    api(`${base}/${encodeURIComponent(callId)}`, { body: { approve } }).then(pending.reload);
  return (
    <Panel title="Approvals">
      <Show
        loaded={pending}
        empty={(value) => value.approvals.length === 0}
        whenEmpty="No tool call waits for approval."
      >
        {(value) => (
          <ul class="list">
            {value.approvals.map((approval) => (
              <li key={approval.callId}>
                <span>
                  <code>{approval.functionId}</code>({preview(approval.input, 120)})
                </span>
                <small>{when(approval.createdAt)}</small>
                <span class="row-actions">
                  <Action label="Approve" kind="primary" run={() => decide(approval.callId, true)} />
                  <Action label="Deny" kind="danger" run={() => decide(approval.callId, false)} />
                </span>
              </li>
            ))}
          </ul>
        )}
      </Show>
    </Panel>
  );
}
