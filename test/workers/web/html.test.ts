import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { charsetOf, decodeBody, htmlToText, isHtml, utf8Boundary } from "../../../src/workers/web/html.ts";

describe("htmlToText", () => {
  it("removes script and style blocks, turns tags into spaces, decodes entities, collapses whitespace", () => {
    const html = `<!doctype html><html><head><title>Title</title>
      <style type="text/css">body { color: red }</style>
      <SCRIPT>var secret = "<b>hidden</b>";</SCRIPT>
      </head><body><p>Hello&nbsp;<b>world</b> &amp; friends &lt;3&gt;</p>
      <!-- a comment --><div>it&#39;s &quot;quoted&quot;</div>
      <script src="x.js"></script ></body></html>`;
    expect(htmlToText(html)).toBe(`Title Hello world & friends <3> it's "quoted"`);
  });

  it("decodes in one pass, so an escaped entity stays escaped", () => {
    expect(htmlToText("&amp;lt;script&amp;gt;")).toBe("&lt;script&gt;");
    expect(htmlToText("&#60; &#x3E; &#0; &#xD800; &unknown;")).toBe("< > &#0; &#xD800; &unknown;");
  });

  it("treats an unclosed script, comment or tag as running to the end", () => {
    expect(htmlToText("before<script>alert(1)")).toBe("before");
    expect(htmlToText("before<!-- never closed <p>x</p>")).toBe("before");
    expect(htmlToText('before<a href="x')).toBe("before");
    // A closing tag with "<" in it does not end the block (found by the property below).
    expect(htmlToText("<script></script/<script>SECRET</script>after")).toBe("after");
  });

  it("keeps a lone < that does not start a tag", () => {
    expect(htmlToText("a < b and 1<2")).toBe("a < b and 1<2");
  });

  it("stays fast on hostile input", () => {
    const started = performance.now();
    htmlToText("<script".repeat(50_000));
    htmlToText(`<script>${"</script ".repeat(50_000)}`);
    htmlToText("<!--".repeat(50_000));
    htmlToText("<a".repeat(50_000));
    htmlToText("&amp".repeat(50_000));
    expect(performance.now() - started).toBeLessThan(2000);
  });

  const fragments = fc.constantFrom(
    "<",
    ">",
    "/",
    "script",
    "SCRIPT",
    "style",
    "<script>",
    "</script>",
    "<script ",
    "</script",
    "<style>",
    "</style>",
    "<!--",
    "-->",
    "<p>",
    "</p>",
    "<br/>",
    " ",
    "\n",
    '"',
    "'",
    "=",
    "text",
    "é",
  );
  const htmlish = fc
    .array(fc.oneof(fragments, fc.string({ maxLength: 5 })), { maxLength: 40 })
    .map((parts) => parts.join("").replaceAll("&", ""));

  it("never throws, and returns trimmed text with single spaces (property)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), htmlish), (html) => {
        const text = htmlToText(html);
        expect(typeof text).toBe("string");
        expect(text).toBe(text.trim());
        expect(text).not.toMatch(/\s\s/);
      }),
      { numRuns: 2000 },
    );
  });

  it("never returns script content, nor anything that starts a tag (property)", () => {
    const attributes = fc.constantFrom("", " type='module'", ' src="x.js"', "\n", "/");
    fc.assert(
      fc.property(htmlish, attributes, htmlish, htmlish, (before, attrs, inside, after) => {
        const html = `${before}<script${attrs}>SECRET_MARKER${inside}</script>${after}`;
        const text = htmlToText(html);
        expect(text).not.toContain("SECRET_MARKER");
        expect(text.toLowerCase()).not.toContain("<script");
        // Without entities in the input, no "<" followed by a tag start survives.
        expect(text).not.toMatch(/<[a-zA-Z/!?]/);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("body decoding", () => {
  it("reads the media type and charset", () => {
    expect(isHtml("text/html; charset=UTF-8")).toBe(true);
    expect(isHtml("application/xhtml+xml")).toBe(true);
    expect(isHtml("text/plain")).toBe(false);
    expect(isHtml("")).toBe(false);
    expect(charsetOf('text/html; charset="ISO-8859-1"')).toBe("iso-8859-1");
    expect(charsetOf("text/html")).toBeUndefined();
  });

  it("decodes the declared charset, falling back to UTF-8 for unknown ones", () => {
    expect(decodeBody(Buffer.from([0x63, 0x61, 0x66, 0xe9]), "text/plain; charset=iso-8859-1", false)).toBe(
      "café",
    );
    expect(decodeBody(Buffer.from("café"), "text/plain; charset=no-such-charset", false)).toBe("café");
  });

  it("drops a UTF-8 character cut in half by truncation", () => {
    const bytes = Buffer.from("aé€😀");
    expect(bytes.length).toBe(1 + 2 + 3 + 4);
    const cuts = [0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10];
    cuts.forEach((expected, length) => {
      expect(utf8Boundary(bytes.subarray(0, length))).toBe(expected);
    });
    expect(decodeBody(bytes.subarray(0, 5), "text/plain", true)).toBe("aé");
  });
});
