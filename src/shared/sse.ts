/** The headers of a server-sent event stream. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};

/**
 * The most characters one server-sent event may hold by default. A chat chunk is a few hundred bytes (a
 * local model server may send a whole tool call in one); an event growing past this without its blank
 * line is a broken or hostile stream, which would otherwise be held whole.
 */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** A stream's event passed `maxEventChars` without ending. */
export class EventTooLongError extends Error {
  constructor(limit: number) {
    super(`a server-sent event of more than ${limit} characters`);
    this.name = "EventTooLongError";
  }
}

/**
 * The events of a server-sent event stream, in order, however its bytes are split: each event's name
 * (`message` when it gives none) and its `data:` lines joined by newlines. Blocks without data (comments,
 * keep-alives) are skipped. Reads text or bytes (UTF-8, a character split across chunks included).
 *
 * Each character is scanned once: the chunks of an event under way are kept apart and joined when its
 * blank line comes (searching all that is held with every chunk cost time in the square of an event's
 * size: a provider's 64 MB event took a minute of the service's thread). An event longer than
 * `maxEventChars` throws EventTooLongError.
 */
export async function* serverSentEvents(
  stream: AsyncIterable<string | Uint8Array>,
  maxEventChars = MAX_EVENT_CHARS,
): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  // Per call: a global regex's lastIndex would be shared by the streams read at the same time.
  const blankLine = /\r?\n\r?\n/g;
  // What came after the last event's end, in its chunks (none holds a blank line), and its last 3
  // characters: a blank line (at most 4) ending in the next chunk may begin there.
  let held: string[] = [];
  let heldChars = 0;
  let tail = "";
  for await (const chunk of stream) {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    blankLine.lastIndex = 0;
    if (!blankLine.test(tail + text)) {
      held.push(text);
      heldChars += text.length;
      tail = (tail + text).slice(-3);
    } else {
      const pending = held.join("") + text;
      blankLine.lastIndex = Math.max(0, heldChars - 3);
      let start = 0;
      for (let end = blankLine.exec(pending); end; end = blankLine.exec(pending)) {
        const event = parseEvent(pending.slice(start, end.index));
        start = end.index + end[0].length;
        if (event) yield event;
      }
      const rest = pending.slice(start);
      held = [rest];
      heldChars = rest.length;
      tail = rest.slice(-3);
    }
    if (heldChars > maxEventChars) throw new EventTooLongError(maxEventChars);
  }
  const event = parseEvent(held.join("") + decoder.decode());
  if (event) yield event;
}

function parseEvent(block: string): { event: string; data: string } | undefined {
  const data: string[] = [];
  let event = "message";
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    else if (line.startsWith("event:")) event = line.slice(6).trim();
  }
  return data.length > 0 ? { event, data: data.join("\n") } : undefined;
}
