import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openAiErrorMessage, toOpenAiError } from "../../../src/llm/openai/errors.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { fixtures } from "./fixtures.ts";

describe("openAiErrorMessage", () => {
  it("takes the message of OpenAI's error bodies", () => {
    expect(openAiErrorMessage(fixtures.errorText("context-length"))).toBe(
      fixtures.error("context-length").error.message,
    );
    expect(openAiErrorMessage(fixtures.errorText("invalid-api-key"))).toMatch(/^Incorrect API key provided/);
  });

  it("keeps at most 300 characters of it", () => {
    const message = openAiErrorMessage(fixtures.errorText("rate-limit"));
    expect(fixtures.error("rate-limit").error.message.length).toBeGreaterThan(200);
    expect(message).toBe(fixtures.error("rate-limit").error.message.slice(0, 300));
    expect(openAiErrorMessage(JSON.stringify({ error: { message: "x".repeat(1000) } }))).toHaveLength(300);
  });

  it("falls back to the body's text when it is not OpenAI's shape", () => {
    expect(openAiErrorMessage("<html>Bad gateway</html>")).toBe("<html>Bad gateway</html>");
    fc.assert(
      fc.property(fc.string(), (body) => {
        expect(openAiErrorMessage(body).length).toBeLessThanOrEqual(300);
      }),
    );
  });
});

describe("toOpenAiError", () => {
  it("writes our error in the shape of OpenAI's error bodies, typed by its status", () => {
    const documented = Object.keys(fixtures.error("invalid-api-key").error).filter((key) => key !== "param");
    const cases = [
      [new AppError("unauthorized", "no key"), 401, "authentication_error"],
      [new AppError("rate_limited", "slow down"), 429, "rate_limit_error"],
      [new AppError("validation", "bad"), 400, "invalid_request_error"],
      [new AppError("upstream", "provider down"), 502, "api_error"],
    ] as const;
    for (const [error, status, type] of cases) {
      const written = toOpenAiError(error);
      expect(written.status).toBe(status);
      expect(written.body.error.type).toBe(type);
      expect(Object.keys(written.body.error).sort()).toEqual(documented.sort());
    }
  });

  it("names the reason as the code when there is one, and hides what is not our error", () => {
    const refused = new AppError("not_found", "no such model", { reason: "model_not_found" });
    expect(toOpenAiError(refused).body.error.code).toBe("model_not_found");
    expect(toOpenAiError(new Error("secret detail"))).toEqual({
      status: 500,
      body: { error: { message: "Internal server error", type: "api_error", code: "internal" } },
    });
  });
});
