import { describe, expect, it } from "vitest";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

/** A jq expression answering one string of about 9 MB (under jq's own limits). */
const NINE_MB = `[range(20000)] | map(tostring) | join("") | [${Array(100).fill(".").join(",")}] | join("")`;

describe("compose's templates", () => {
  it("refuses a step whose args would render a large result as text many times, before rendering it", async () => {
    await env.agent();
    // Each {{prev.results}} inside a longer string is written out as JSON: 100 of them over 9 MB made a
    // gigabyte string (V8's limit: a 500) and held the service's thread for seconds.
    const failure = await env.failure("tool::compose", {
      steps: [
        { tool: "tool::json_transform", args: { data: null, expression: NINE_MB } },
        { tool: "tool::hash_compute", args: { text: "{{prev.results}}".repeat(100) } },
      ],
    });
    expect(failure).toMatchObject({
      status: 400,
      message: expect.stringMatching(/its args: a template would render to more than/),
    });
  });

  it("refuses results that together weigh past its limit, though each step's answer is under its own", async () => {
    await env.agent();
    // Five 9 MB outputs, passed on whole by each next step: ten steps answered 489 MB of JSON.
    const failure = await env.failure("tool::compose", {
      steps: [
        { tool: "tool::json_transform", args: { data: null, expression: `${NINE_MB} | (.,.,.,.,.)` } },
        ...Array.from({ length: 9 }, () => ({
          tool: "tool::json_transform",
          args: { data: "{{prev.results}}", expression: ".[]" },
        })),
      ],
    });
    expect(failure).toMatchObject({
      status: 400,
      message: expect.stringMatching(/results so far weigh more/),
    });
  });

  it("still passes a large result whole, and names small parts of it in text", async () => {
    await env.agent();
    const result = await env.tool<{ output: { results: unknown[] } }>("tool::compose", {
      steps: [
        { tool: "tool::json_transform", args: { data: null, expression: NINE_MB } },
        { tool: "tool::json_transform", args: { data: "{{prev.results}}", expression: "length" } },
        { tool: "tool::json_transform", args: { data: { n: "count {{prev.results.0}}" }, expression: ".n" } },
      ],
    });
    expect(result.output.results).toEqual(["count 1"]);
  });
});
