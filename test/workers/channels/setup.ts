import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect } from "vitest";
import type { Config } from "../../../src/config/env.ts";
import type { Logger } from "../../../src/shared/logger.ts";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

export interface PlatformCall {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface ChannelsEnv {
  readonly server: TestServer;
  readonly fake: FakeOpenAI;
  /** Every request the fake platform APIs received, in order. */
  readonly platform: PlatformCall[];
  readonly platformUrl: string;
  secret(key: string, value: string): Promise<void>;
  /** A new agent of a new realm, bound to the platform's channel. */
  boundAgent(platform: string, channelId: string): Promise<{ agentId: string; realmId: string }>;
  /** POST to the service's webhook route with the exact body bytes given. */
  webhook(
    path: string,
    rawBody: string,
    headers: Record<string, string>,
    method?: string,
  ): Promise<{ status: number; body: unknown }>;
  /** Waits until the fake platform received `count` calls. */
  platformCalls(count: number): Promise<PlatformCall[]>;
}

/** The real service with the scripted model and a fake platform API (every <PLATFORM>_API_BASE_URL). */
export function channelsServer(options: { logger?: Logger; config?: Partial<Config> } = {}): ChannelsEnv {
  let server: TestServer | undefined;
  let fake: FakeOpenAI | undefined;
  let api: Server | undefined;
  let platformUrl = "";
  const platform: PlatformCall[] = [];
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    api = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        platform.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((resolve) => api?.listen(0, "127.0.0.1", resolve));
    platformUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const bases = Object.fromEntries(
      [
        "SLACK",
        "TELEGRAM",
        "GITHUB",
        "DISCORD",
        "WHATSAPP",
        "MESSENGER",
        "LINE",
        "TWILIO",
        "TEAMS",
        "MATRIX",
      ].map((name) => [`${name}_API_BASE_URL`, platformUrl]),
    );
    server = await startTestServer(
      {
        ...options.config,
        env: {
          ...process.env,
          OPENAI_API_KEY: "sk-test",
          OPENAI_BASE_URL: fake.baseUrl,
          AGENTOS_ALLOW_PRIVATE_NETWORK: "1",
          ...bases,
        },
      },
      options,
    );
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await new Promise<void>((resolve) => (api ? api.close(() => resolve()) : resolve()));
  });
  const self: ChannelsEnv = {
    get server() {
      if (!server) throw new Error("no server outside a test");
      return server;
    },
    get fake() {
      if (!fake) throw new Error("no fake model outside a test");
      return fake;
    },
    platform,
    get platformUrl() {
      return platformUrl;
    },
    async secret(key, value) {
      expect((await call(self.server, "POST", "/api/vault", { key, value })).status).toBe(201);
    },
    async boundAgent(name, channelId) {
      const realmId = await newRealm(self.server);
      const agentId = await createAgent(self.server, realmId, { name: `${name} agent` });
      const bound = await call(self.server, "POST", "/api/channels", { platform: name, channelId, agentId });
      expect(bound.status, JSON.stringify(bound.body)).toBe(201);
      return { agentId, realmId };
    },
    async webhook(path, rawBody, headers, method = "POST") {
      const response = await fetch(`${self.server.url}${path}`, {
        method,
        headers,
        body: method === "GET" ? undefined : rawBody,
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Plain text (a challenge).
      }
      return { status: response.status, body };
    },
    async platformCalls(count) {
      for (let i = 0; i < 150 && platform.length < count; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(platform.length).toBeGreaterThanOrEqual(count);
      return platform.slice(0, count);
    },
  };
  return self;
}
