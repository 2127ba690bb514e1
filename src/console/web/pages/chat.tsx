import { useRef, useState } from "preact/hooks";
import { stream } from "../api.ts";
import { preview } from "../lib/format.ts";
import { Problem } from "../ui.tsx";

/** One line of the conversation as it is drawn: text, or a tool call with its result once it came. */
type Line =
  | { kind: "user" | "assistant"; text: string }
  | { kind: "tool"; id: string; name: string; input: unknown; output?: unknown; done: boolean };

/**
 * Chat through the message route's event stream: the reply's text appears as the model writes it,
 * each tool call as it is made and its result when it returns.
 */
export function Chat(props: {
  agentId: string;
  sessionId?: string;
  onSession: (id: string) => void;
  onTurn: () => void;
}) {
  const [lines, setLines] = useState<Line[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const input = useRef<HTMLTextAreaElement>(null);

  const send = async (event: Event) => {
    event.preventDefault();
    const message = input.current?.value.trim();
    if (!message || busy) return;
    if (input.current) input.current.value = "";
    setBusy(true);
    setError(undefined);
    setLines((before) => [...before, { kind: "user", text: message }, { kind: "assistant", text: "" }]);
    const append = (change: (lines: Line[]) => Line[]) => setLines((before) => change([...before]));
    try {
      const events = stream(`/api/agents/${encodeURIComponent(props.agentId)}/message`, {
        body: { message, stream: true, ...(props.sessionId ? { sessionId: props.sessionId } : {}) },
      });
      for await (const item of events) {
        const data = JSON.parse(item.data);
        if (item.event === "text") append((all) => addText(all, data.text));
        else if (item.event === "tool_call") {
          append((all) => [
            ...all,
            { kind: "tool", id: data.toolCallId, name: data.toolName, input: data.input, done: false },
            { kind: "assistant", text: "" },
          ]);
        } else if (item.event === "tool_result") {
          append((all) =>
            all.map((line) =>
              line.kind === "tool" && line.id === data.toolCallId
                ? { ...line, output: data.output, done: true }
                : line,
            ),
          );
        } else if (item.event === "start" && data.sessionId) props.onSession(data.sessionId);
        else if (item.event === "done") {
          if (data.sessionId) props.onSession(data.sessionId);
          append((all) => settle(all, data.content));
          props.onTurn();
        } else if (item.event === "error") setError(data.error);
      }
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="chat">
      <ol class="messages" aria-live="polite">
        {lines
          .filter((line) => line.kind !== "assistant" || line.text !== "")
          .map((line, index) =>
            line.kind === "tool" ? (
              <li key={`${line.id}-${index}`} class="tool">
                <b>{line.name}</b>({preview(line.input, 80)}){" "}
                {line.done ? `→ ${preview(line.output, 160)}` : "…"}
              </li>
            ) : (
              <li key={index} class={line.kind}>
                {line.text}
              </li>
            ),
          )}
        {busy ? <li class="typing">…</li> : null}
      </ol>
      <form class="send" onSubmit={send}>
        <textarea
          ref={input}
          rows={2}
          placeholder="Message the agent (Enter sends, Shift+Enter for a new line)"
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.shiftKey) send(event);
          }}
        />
        <button type="submit" class="primary" disabled={busy}>
          Send
        </button>
      </form>
      <Problem error={error} />
    </div>
  );
}

function addText(lines: Line[], text: string): Line[] {
  const last = lines.at(-1);
  if (last?.kind === "assistant") lines[lines.length - 1] = { ...last, text: last.text + text };
  else lines.push({ kind: "assistant", text });
  return lines;
}

/** The final answer replaces what streamed when nothing streamed (a model that does not stream). */
function settle(lines: Line[], content: string): Line[] {
  const asked = lines.findLastIndex((line) => line.kind === "user");
  const streamed = lines.slice(asked + 1).some((line) => line.kind === "assistant" && line.text !== "");
  return streamed || !content ? lines : addText(lines, content);
}
