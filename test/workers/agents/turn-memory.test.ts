import { describe, expect, it } from "vitest";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { send } from "../memory/embedding-env.ts";

describe("a turn's memories", () => {
  const world = serverWithFakeModel({}, { shared: true });
  const contents = async (agentId: string) =>
    (
      (await send(world.server, "GET", `/api/agents/${agentId}/memory`)).body.memories as Array<{
        content: string;
      }>
    ).map((entry) => entry.content);

  it.each([
    ["12 000 characters of Japanese (36 000 bytes)", "日本語".repeat(4_000)],
    ["32 768 characters ending inside an emoji", `${"a".repeat(32_767)}😀 and more`],
  ])("keeps the turn's memories of a long message: %s", async (_label, message) => {
    const created = await send(world.server, "POST", "/api/agents", {
      name: `long-${Date.now()}`,
      model: "gpt-4o",
    });
    const agentId = created.body.id;
    const turn = await send(world.server, "POST", `/api/agents/${agentId}/message`, { message });
    expect(turn.status).toBe(200);
    const kept = await contents(agentId);
    expect(kept).toHaveLength(2);
    expect(kept).toContain("ok");
    const long = kept.find((content) => content !== "ok") ?? "";
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(32 * 1024);
    expect(long.isWellFormed()).toBe(true);
    expect(message.startsWith(long)).toBe(true);
  });

  it("keeps the user's message of a turn whose reply is empty", async () => {
    const created = await send(world.server, "POST", "/api/agents", {
      name: `empty-${Date.now()}`,
      model: "gpt-4o",
    });
    const agentId = created.body.id;
    world.fake.reply({ content: "" });
    const turn = await send(world.server, "POST", `/api/agents/${agentId}/message`, {
      message: "remember the launch is on Friday",
    });
    expect(turn.status).toBe(200);
    expect(await contents(agentId)).toEqual(["remember the launch is on Friday"]);
  });
});
