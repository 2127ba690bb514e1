/** The headers of a server-sent event stream. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};

/**
 * The events of a server-sent event stream, in order, however its bytes are split: each event's name
 * (`message` when it gives none) and its `data:` lines joined by newlines. Blocks without data (comments,
 * keep-alives) are skipped. Reads text or bytes (UTF-8, a character split across chunks included).
 */
export async function* serverSentEvents(
  stream: AsyncIterable<string | Uint8Array>,
): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let end = eventEnd(pending);
    while (end) {
      const event = parseEvent(pending.slice(0, end.at));
      pending = pending.slice(end.at + end.length);
      if (event) yield event;
      end = eventEnd(pending);
    }
  }
  const event = parseEvent(pending + decoder.decode());
  if (event) yield event;
}

function eventEnd(text: string): { at: number; length: number } | undefined {
  const match = /\r?\n\r?\n/.exec(text);
  return match ? { at: match.index, length: match[0].length } : undefined;
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
