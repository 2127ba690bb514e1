import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toErrorReply } from "../../src/http/errors.ts";
import { AppError, conflict } from "../../src/shared/errors.ts";

describe("error replies", () => {
  it("maps AppError codes to their status and keeps retryAfter", () => {
    expect(toErrorReply(conflict("stale"))).toMatchObject({ status: 409, body: { error: "stale" } });
    const limited = toErrorReply(new AppError("rate_limited", "slow down", { retryAfter: 7 }));
    expect(limited).toMatchObject({ status: 429, body: { error: "slow down", retryAfter: 7 } });
  });

  it("names the field of a zod error with 400", () => {
    const parsed = z.strictObject({ name: z.string() }).safeParse({ name: 1 });
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(toErrorReply(parsed.error).body.error).toMatch(/^name: /);
  });

  it("keeps Fastify's own client errors", () => {
    const tooLarge = Object.assign(new Error("FST_ERR_CTP_BODY_TOO_LARGE: too large"), {
      code: "FST_ERR_CTP_BODY_TOO_LARGE",
      statusCode: 413,
    });
    expect(toErrorReply(tooLarge)).toMatchObject({ status: 413, unexpected: false });
  });

  it("turns an upstream error carrying a 4xx statusCode into a 500 without its message", () => {
    const upstream = Object.assign(new Error("Incorrect API key provided: sk-abc"), { statusCode: 401 });
    expect(toErrorReply(upstream)).toEqual({
      status: 500,
      body: { error: "Internal server error" },
      unexpected: true,
    });
  });
});
