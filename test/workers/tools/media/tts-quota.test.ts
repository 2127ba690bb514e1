import { describe, expect, it } from "vitest";
import { toolsServer } from "../setup.ts";

const QUOTA_MB = 1;
const env = toolsServer({ AGENTOS_WORKSPACE_QUOTA_MB: String(QUOTA_MB) });

describe("spoken audio under the workspace quota", () => {
  it("refuses to save speech into a full workspace, as file_write and media_download do", async () => {
    await env.agent();
    // All but 8 bytes of the quota: the fake provider's audio (19 bytes) does not fit.
    await env.tool("tool::file_write", { path: "full.txt", content: "a".repeat(QUOTA_MB * 1024 * 1024 - 8) });
    const failure = await env.failure("tool::tts_speak", { text: "hello", path: "hello.mp3" });
    expect(failure).toMatchObject({ status: 413, message: expect.stringContaining("quota") });
  });
});
