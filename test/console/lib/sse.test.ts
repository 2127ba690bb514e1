import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventParser, type ServerEvent } from "../../../src/console/web/lib/sse.ts";

const stream = (events: ServerEvent[], newline: string) =>
  events
    .map(
      (event) =>
        `event: ${event.event}${newline}${event.data
          .split("\n")
          .map((line) => `data: ${line}`)
          .join(newline)}${newline}${newline}`,
    )
    .join("");

const eventArb = fc.record({
  event: fc.stringMatching(/^[a-z_]{1,12}$/),
  data: fc
    .array(
      fc.string({ unit: "grapheme" }).filter((line) => !/[\r\n]/.test(line)),
      { minLength: 1, maxLength: 3 },
    )
    .map((lines) => lines.join("\n")),
});

describe("eventParser", () => {
  it("reads the same events however the stream is cut into pieces, with any line ending", () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 6 }),
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.array(fc.nat(), { maxLength: 12 }),
        (events, newline, cuts) => {
          const text = stream(events, newline);
          const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
          const parse = eventParser();
          const seen: ServerEvent[] = [];
          let from = 0;
          for (const point of [...points, text.length]) {
            seen.push(...parse(text.slice(from, point)));
            from = point;
          }
          // A stream ending in a lone \r completes its last event only when more text comes.
          if (newline === "\r") seen.push(...parse("\n"));
          expect(seen).toEqual(events);
        },
      ),
    );
  });

  it("skips comments, names an unnamed event message, and keeps an event without data out", () => {
    const parse = eventParser();
    expect(parse(': keep-alive\n\ndata: {"a":1}\n\nevent: empty\n\n')).toEqual([
      { event: "message", data: '{"a":1}' },
    ]);
  });
});
