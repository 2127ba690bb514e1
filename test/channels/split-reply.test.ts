import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PLATFORMS } from "../../src/channels/platforms.ts";
import { splitReply } from "../../src/channels/split-reply.ts";

const withoutSpace = (text: string) => text.replace(/\s+/g, "");

describe("splitReply", () => {
  it("keeps every part within the limit and loses no character but the spaces it cuts at", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 400, unit: fc.constantFrom("a", "b", " ", "\n", "é", "—") }),
        fc.integer({ min: 1, max: 60 }),
        (text, max) => {
          const parts = splitReply(text, max);
          for (const part of parts) {
            expect(part.length).toBeLessThanOrEqual(max);
            expect(part).toBe(part.trim());
            expect(part).not.toBe("");
          }
          expect(withoutSpace(parts.join(""))).toBe(withoutSpace(text));
        },
      ),
    );
  });

  it("stops at maxParts, the last part ending with … and still within the limit", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 400 }),
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1, max: 4 }),
        (text, max, maxParts) => {
          const parts = splitReply(text, max, maxParts);
          expect(parts.length).toBeLessThanOrEqual(maxParts);
          for (const part of parts) expect(part.length).toBeLessThanOrEqual(max);
          if (splitReply(text, max).length > maxParts) expect(parts.at(-1)?.endsWith("…")).toBe(true);
        },
      ),
    );
  });

  it("cuts at the last space before the limit", () => {
    expect(splitReply("aaa bbb ccc", 7)).toEqual(["aaa bbb", "ccc"]);
    expect(splitReply("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
  });

  it.each(PLATFORMS.map((platform) => [platform.platform, platform] as const))(
    "splits a long %s reply into parts the platform takes",
    (_name, platform) => {
      const text = "word ".repeat(Math.ceil((platform.maxChunk * 2.5) / 5));
      const parts = splitReply(text, platform.maxChunk, platform.maxParts);
      expect(parts.length).toBe(Math.min(3, platform.maxParts ?? 3));
      for (const part of parts) expect(part.length).toBeLessThanOrEqual(platform.maxChunk);
    },
  );
});
