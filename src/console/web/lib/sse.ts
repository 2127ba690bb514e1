/** One server-sent event: its `event:` name (default "message") and its data lines joined. */
export interface ServerEvent {
  event: string;
  data: string;
}

/**
 * Server-sent events from text that arrives in arbitrary pieces (the console reads streams with fetch,
 * which, unlike EventSource, can send the API key). Feed each piece; complete events come back, the
 * rest waits for the next piece. Lines end in \n, \r\n or \r; comments (`:`) are skipped.
 */
export function eventParser(): (piece: string) => ServerEvent[] {
  let buffer = "";
  let event = "";
  let data: string[] = [];
  return (piece) => {
    buffer += piece;
    const done: ServerEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(buffer);
      // A lone \r at the end may be the first half of \r\n: wait for the next piece.
      if (!match || (match[0] === "\r" && match.index === buffer.length - 1)) break;
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      if (line === "") {
        if (data.length > 0) done.push({ event: event || "message", data: data.join("\n") });
        event = "";
        data = [];
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
    }
    return done;
  };
}
