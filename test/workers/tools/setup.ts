import { afterAll, beforeAll } from "vitest";
import { agentPrincipal } from "../../../src/engine/acting-agent.ts";
import type { Principal } from "../../../src/engine/types.ts";
import { createAgent, newRealm } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

export interface ToolsEnv {
  readonly server: TestServer;
  /** The instant OpenAI-compatible model every agent of the server talks to. */
  readonly fake: FakeOpenAI;
  /** A new agent (full profile) of a new realm. */
  agent(fields?: Record<string, unknown>): Promise<{ agentId: string; realmId: string }>;
  /** Calls a tool as the agent's own tool call would (its realm, key id `agent:<id>`). */
  tool<T = Record<string, unknown>>(
    id: string,
    payload: Record<string, unknown>,
    as?: { agentId: string; realmId: string },
  ): Promise<T>;
  /** The error a tool call fails with. */
  failure(
    id: string,
    payload: Record<string, unknown>,
    as?: { agentId: string; realmId: string },
  ): Promise<{ message: string; status?: number }>;
}

/** One real service per test file (tools act on the file system and processes, not on a mock). */
export function toolsServer(env: Record<string, string> = {}): ToolsEnv {
  let server: TestServer | undefined;
  let current: { agentId: string; realmId: string } | undefined;
  let fake: FakeOpenAI | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      env: {
        ...process.env,
        AGENTOS_ALLOW_PRIVATE_NETWORK: "1",
        OPENAI_API_KEY: "sk-test",
        OPENAI_BASE_URL: fake.baseUrl,
        ...env,
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });
  const principal = (as: { agentId: string; realmId: string }): Principal =>
    agentPrincipal({ id: as.agentId, realmId: as.realmId });
  const self: ToolsEnv = {
    get fake() {
      if (!fake) throw new Error("toolsServer: no fake model outside a test");
      return fake;
    },
    get server() {
      if (!server) throw new Error("toolsServer: no server outside a test");
      return server;
    },
    async agent(fields = {}) {
      const realmId = await newRealm(self.server);
      const agentId = await createAgent(self.server, realmId, { toolProfile: "full", ...fields });
      current = { agentId, realmId };
      return current;
    },
    async tool(id, payload, as = current) {
      if (!as && needsAgent(id)) throw new Error("toolsServer: create an agent first");
      return (await self.server.service.engine.trigger({
        function_id: id,
        payload: {
          ...(as && payload.agentId === undefined && needsAgent(id) ? { agentId: as.agentId } : {}),
          ...payload,
        },
        auth: as ? principal(as) : { kind: "admin", keyId: "test" },
      })) as never;
    },
    async failure(id, payload, as = current) {
      try {
        await self.tool(id, payload, as);
      } catch (error) {
        return { message: (error as Error).message, status: (error as { status?: number }).status };
      }
      throw new Error(`${id} succeeded where it should have failed`);
    },
  };
  return self;
}

const WITHOUT_AGENT =
  /^tool::(system_info|network_check|env_get|json_|csv_|yaml_|regex_|uuid_|hash_compute|sql_build|web_|api_call|browser_screenshot)/;
const needsAgent = (id: string) => !WITHOUT_AGENT.test(id);
