import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CliResult,
  makeDataDir,
  removeDir,
  runCli,
  type ServeProcess,
  startServe,
} from "../helpers/process.ts";

const ADMIN_KEY = "cli-channels-admin-key-0123456789ab";
let dataDir: string;
let server: ServeProcess;

function agentos(...args: string[]): Promise<CliResult> {
  return runCli(args, { AGENTOS_DATA_DIR: dataDir, AGENTOS_LOG_LEVEL: "warn" });
}

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServe({
    dataDir,
    env: { AGENTOS_API_KEY: ADMIN_KEY, OPENAI_API_KEY: "sk-test-unused" },
  });
});
afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

describe("agentos channels and config set-secret", () => {
  it("binds, lists and unbinds channels, and stores a platform secret the running service then verifies with", async () => {
    const created = await server.request("/api/agents", {
      key: ADMIN_KEY,
      method: "POST",
      json: { name: "cli channel agent", model: "gpt-4o" },
    });
    const { id: agentId } = (await created.json()) as { id: string };
    const bound = await agentos("channels", "bind", "slack", "C42", agentId);
    expect(bound.code, bound.stderr).toBe(0);
    expect(JSON.parse(bound.stdout)).toMatchObject({
      platform: "slack",
      channelId: "C42",
      agentId,
      realmId: "realm-default",
    });
    // The agent by its name as well.
    const byName = await agentos("channels", "bind", "telegram", "T42", "cli channel agent");
    expect(byName.code, byName.stderr).toBe(0);
    expect(JSON.parse(byName.stdout)).toMatchObject({ platform: "telegram", channelId: "T42", agentId });
    expect((await agentos("channels", "unbind", "telegram", "T42")).code).toBe(0);
    const listed = await agentos("channels", "list", "--platform", "slack", "--json");
    expect(JSON.parse(listed.stdout).bindings).toEqual([expect.objectContaining({ channelId: "C42" })]);

    expect((await agentos("config", "set-secret", "channel:slack:signing_secret", "cli-secret")).code).toBe(
      0,
    );
    const raw = JSON.stringify({ type: "url_verification", challenge: "from-cli" });
    const at = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac("sha256", "cli-secret").update(`v0:${at}:${raw}`).digest("hex")}`;
    const answer = await server.request("/webhook/slack", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": at,
        "x-slack-signature": signature,
      },
      body: raw,
    });
    expect(await answer.json()).toEqual({ challenge: "from-cli" });
    expect((await agentos("channels", "unbind", "slack", "C42")).stdout).toContain("Unbound slack:C42");
    expect((await agentos("channels", "unbind", "slack", "C42")).code).toBe(1);
  }, 120_000);

  it("lists channel bindings as a table for people by default", async () => {
    const created = await server.request("/api/agents", {
      key: ADMIN_KEY,
      method: "POST",
      json: { name: "cli table agent", model: "gpt-4o" },
    });
    const { id: agentId } = (await created.json()) as { id: string };
    const bound = await server.request("/api/channels", {
      key: ADMIN_KEY,
      method: "POST",
      json: { platform: "telegram", channelId: "T7", agentId },
    });
    expect(bound.status).toBe(201);
    const listed = await agentos("channels", "list", "--platform", "telegram");
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^PLATFORM\s+CHANNEL\s+AGENT\s+REALM$/);
    expect(lines[1]).toMatch(new RegExp(`^telegram\\s+T7\\s+${agentId}\\s+realm-default$`));
  });
});
