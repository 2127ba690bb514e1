import { describe, expect, it } from "vitest";
import { spentBudget } from "../../../helpers/control-plane.ts";
import { toolsServer } from "../setup.ts";
import { rootAndChild, spentByAgent } from "../trees.ts";

const env = toolsServer();

const audioRequests = () => env.fake.requests.filter((request) => "audio" in request).length;

describe("a sub-agent's speech is paid by the root of its tree, as its turns are", () => {
  it("charges the root for its sub-agent's speech", async () => {
    const { root, asChild } = await rootAndChild(env, "speaker");
    await env.tool("tool::tts_speak", { text: "a".repeat(400), path: "a.mp3" }, asChild);
    await env.tool("tool::audio_transcribe", { path: "a.mp3" }, asChild);
    const breakdown = await spentByAgent(env, root.realmId);
    expect(breakdown[root.agentId]).toBeGreaterThan(0);
    expect(breakdown[asChild.agentId]).toBeUndefined();
  });

  it("refuses its sub-agent's speech with 402 once the root's own budget is spent, calling no provider", async () => {
    const { root, asChild } = await rootAndChild(env, "speaker");
    await env.tool("tool::file_write", { path: "hello.mp3", content: "ID3 not really audio" }, asChild);
    await spentBudget(env.server, root.realmId, root.agentId);
    const before = audioRequests();
    const spoken = await env.failure("tool::tts_speak", { text: "again", path: "again.mp3" }, asChild);
    expect(spoken.status).toBe(402);
    expect((await env.failure("tool::audio_transcribe", { path: "hello.mp3" }, asChild)).status).toBe(402);
    expect(audioRequests()).toBe(before);
  });
});
