import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentOS, createAgentOS } from "../../../src/app.ts";
import { loadConfig } from "../../../src/config/env.ts";
import { startFakeOpenAI } from "../../helpers/fake-openai.ts";

const ADMIN = "restart-admin-key-0123456789abcdef";

describe("a reply owed to a platform", () => {
  it("is delivered after a restart when the platform was down before it", () => scenario("platform down"));
  it("is answered after a restart that cut its agent's turn short", () => scenario("turn cut"));
});

/** A Telegram message whose reply is owed when the service stops, then the service started again. */
async function scenario(kind: "platform down" | "turn cut"): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentos-channels-"));
  const fake = await startFakeOpenAI();
  let up = false;
  const received: string[] = [];
  const api = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (!up) return void res.writeHead(503).end("down");
      received.push(body);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  const start = async (): Promise<{ service: AgentOS; url: string }> => {
    const service = await createAgentOS({
      ...loadConfig({
        AGENTOS_DATA_DIR: dataDir,
        AGENTOS_API_KEY: ADMIN,
        AGENTOS_LOG_LEVEL: "silent",
        OPENAI_API_KEY: "sk-test",
        OPENAI_BASE_URL: fake.baseUrl,
        TELEGRAM_API_BASE_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
      }),
      port: 0,
      host: "127.0.0.1",
      enginePort: 0,
      rateLimits: false,
    });
    return { service, url: await service.listen() };
  };
  const admin = (url: string, path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json());
  try {
    const first = await start();
    const agent = (await admin(first.url, "/api/agents", { name: "tg", model: "gpt-4o" })) as {
      id: string;
    };
    await admin(first.url, "/api/channels", { platform: "telegram", channelId: "99", agentId: agent.id });
    await admin(first.url, "/api/vault", { key: "channel:telegram:secret_token", value: "s" });
    await admin(first.url, "/api/vault", { key: "channel:telegram:bot_token", value: "1:T" });
    if (kind === "turn cut") {
      up = true;
      fake.reply({ hang: true }, { content: "survives restarts" });
    } else fake.reply({ content: "survives restarts" });
    const update = JSON.stringify({
      update_id: 5,
      message: { text: "hi", chat: { id: 99 }, from: { id: 1 } },
    });
    const accepted = await fetch(`${first.url}/webhook/telegram`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s" },
      body: update,
    });
    expect(accepted.status).toBe(200);
    // The turn ran; delivery failed against the down platform and is waiting for its retry.
    for (let i = 0; i < 50 && fake.requests.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await first.service.close();
    expect(received).toEqual([]);
    up = true;
    const second = await start();
    try {
      for (let i = 0; i < 100 && received.length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(received.map((body) => JSON.parse(body))).toEqual([
        { chat_id: "99", text: "survives restarts" },
      ]);
      expect(fake.requests.length).toBe(kind === "turn cut" ? 2 : 1);
    } finally {
      await second.service.close();
    }
  } finally {
    await fake.close();
    await new Promise<void>((resolve) => api.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
