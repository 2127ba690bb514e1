import { useEffect, useState } from "preact/hooks";
import { api } from "../api.ts";
import { agentChanges } from "../lib/agent-changes.ts";
import { preview, when } from "../lib/format.ts";
import { navigate } from "../router.ts";
import type { AgentDetail, Answer, Item } from "../types.ts";
import { Action, ApiForm, Badge, DeleteAction, Page, Panel, Show, useLoad } from "../ui.tsx";
import { Chat } from "./chat.tsx";

export function AgentPage(props: { id: string }) {
  const agent = useLoad(() => api<AgentDetail>(`/api/agents/${encodeURIComponent(props.id)}`), [props.id]);
  const [sessionId, setSessionId] = useState<string>();
  // Each finished turn changes the sessions' counts: they are read again.
  const [turns, setTurns] = useState(0);
  return (
    <Show loaded={agent}>
      {(value) => (
        <Page
          title={value.name}
          actions={
            <DeleteAction
              question={`Delete ${value.name} with its sessions and memory?`}
              path={`/api/agents/${encodeURIComponent(value.id)}`}
              onDone={() => navigate("agents")}
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
                    { name: "model", label: "Model", value: value.model },
                    { name: "description", label: "Description", value: value.description ?? "" },
                    {
                      name: "toolProfile",
                      label: "Tool profile",
                      options: ["chat", "code", "research", "ops", "data", "full"],
                      value: value.toolProfile,
                    },
                    { name: "tools", label: "Tools (comma separated)", value: value.tools.join(", ") },
                    {
                      name: "capabilities",
                      label: "Capabilities (comma separated)",
                      value: value.capabilities?.join(", ") ?? "",
                    },
                    {
                      name: "temperature",
                      label: "Temperature",
                      kind: "number",
                      value: value.temperature === undefined ? "" : String(value.temperature),
                    },
                    {
                      name: "systemPrompt",
                      label: "System prompt",
                      kind: "textarea",
                      value: value.systemPrompt ?? "",
                    },
                  ]}
                  run={(form) =>
                    api(`/api/agents/${encodeURIComponent(value.id)}`, {
                      method: "PATCH",
                      body: agentChanges(value, form),
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
    () => api<Answer<"agent::sessions">>(`${base}?limit=50`),
    [props.agentId, props.open, props.turns],
  );
  const history = useLoad<Pick<Answer<"agent::session">, "messages">>(
    () =>
      props.open
        ? api<Answer<"agent::session">>(`${base}/${encodeURIComponent(props.open)}?limit=200`)
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

type Memory = Item<Answer<"agent::memory_list">["memories"]>;

/** The newest memories, or those that match a search, each of which can be forgotten; or all at once. */
function Memory(props: { agentId: string }) {
  const base = `/api/agents/${encodeURIComponent(props.agentId)}/memory`;
  const [query, setQuery] = useState("");
  const memories = useLoad(
    async (): Promise<{ entries: Array<Memory & { score?: number }>; searched: boolean }> =>
      query
        ? {
            entries: (await api<Answer<"agent::memory">>(base, { body: { query, limit: 20 } })).results,
            searched: true,
          }
        : {
            entries: (await api<Answer<"agent::memory_list">>(`${base}?limit=20`)).memories,
            searched: false,
          },
    [base, query],
  );
  const search = (event: Event) => {
    event.preventDefault();
    setQuery(String(new FormData(event.currentTarget as HTMLFormElement).get("query") ?? "").trim());
  };
  return (
    <Panel title="Memory">
      <form class="inline" onSubmit={search}>
        <input name="query" placeholder="Search what the agent remembers (empty: the newest)" />
        <button type="submit">Search</button>
      </form>
      <Show
        loaded={memories}
        empty={(value) => value.entries.length === 0}
        whenEmpty={
          query
            ? "Nothing matches. The agent remembers its conversations as they happen."
            : "The agent remembers nothing yet: its conversations are remembered as they happen."
        }
      >
        {(value) => (
          <>
            <ul class="list">
              {value.entries.map((memory) => (
                <li key={memory.id}>
                  <small>
                    {memory.role}
                    {memory.score === undefined ? "" : ` · score ${memory.score.toFixed(2)}`} ·{" "}
                    {when(memory.createdAt)}
                  </small>
                  <div>{preview(memory.content, 300)}</div>
                  <span class="row-actions">
                    <Action
                      label="Forget"
                      run={() =>
                        api(`${base}/${encodeURIComponent(memory.id)}`, { method: "DELETE" }).then(
                          memories.reload,
                        )
                      }
                    />
                  </span>
                </li>
              ))}
            </ul>
            {value.searched ? null : (
              <DeleteAction
                label="Forget everything"
                question="Forget every memory of this agent? This cannot be undone."
                path={base}
                onDone={memories.reload}
              />
            )}
          </>
        )}
      </Show>
    </Panel>
  );
}

/** Tool calls of the agent that wait for a person's approval (admin keys decide). */
function Approvals(props: { agentId: string }) {
  const base = `/api/agents/${encodeURIComponent(props.agentId)}/approvals`;
  const pending = useLoad(() => api<Answer<"tools::approvals">>(`${base}?status=pending`), [props.agentId]);
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
