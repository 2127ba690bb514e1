import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stateClient } from "../../../src/engine/state/client.ts";
import { LEASES_SCOPE } from "../../../src/workers/pulse/store.ts";
import { sleep } from "../../helpers/iii.ts";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";
import { invoke, registered, setup } from "./helpers.ts";

/**
 * An OpenAI-compatible model that answers every request after `delayMs`, and counts what happened to
 * each request: answered, or abandoned by the caller (the connection closed before the answer).
 */
interface SlowModel {
  baseUrl: string;
  received: number;
  answered: number;
  abandoned: number;
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
}

async function startSlowModel(delayMs: number): Promise<SlowModel> {
  const model = {
    baseUrl: "",
    received: 0,
    answered: 0,
    abandoned: 0,
    inFlight: 0,
    maxInFlight: 0,
  };
  const server: Server = createServer((req, res) => {
    model.received++;
    model.inFlight++;
    model.maxInFlight = Math.max(model.maxInFlight, model.inFlight);
    let done = false;
    const end = (outcome: "answered" | "abandoned") => {
      if (done) return;
      done = true;
      model.inFlight--;
      model[outcome]++;
    };
    res.on("close", () => end("abandoned"));
    req.resume();
    setTimeout(() => {
      if (done) return;
      end("answered");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "chatcmpl-slow",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: "gpt-4o",
          choices: [{ index: 0, message: { role: "assistant", content: "too late" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
        }),
      );
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  model.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return Object.assign(model, {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

const MODEL_DELAY_MS = 2500;
let model: SlowModel;
let server: TestServer;

beforeEach(async () => {
  model = await startSlowModel(MODEL_DELAY_MS);
  server = await startTestServer({ env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseUrl } });
});
afterEach(async () => {
  await server.close();
  await model.close();
});

describe("pulse timeoutSecs", () => {
  it("aborts the agent's turn at the timeout: retries never overlap, nothing is answered or stored, the lease outlives no turn", async () => {
    const { realmId, agentId } = await setup(server);
    await registered(server, { realmId, agentId, cron: "0 0 0 1 1 *", timeoutSecs: 1, maxRetries: 2 });
    const started = Date.now();
    const response = await invoke(server, { realmId, agentId });
    expect(response.status).toBe(200);
    const run = await json(response);
    expect(run).toMatchObject({ status: "Failed", attempts: 3, error: "agent::chat timed out after 1 s" });
    // Three one-second attempts with short pauses, not three 2.5 s turns.
    expect(Date.now() - started).toBeLessThan(3 * MODEL_DELAY_MS);
    expect(model.received).toBe(3);
    // Each attempt's model call was abandoned when its time was up, before the next one started.
    expect(model.maxInFlight).toBe(1);
    // The lease is released once the run has ended, and by then no turn of it is still running.
    const state = stateClient((request) => server.service.engine.trigger(request));
    expect(await state.get(LEASES_SCOPE, `${realmId}/${agentId}`)).toBeNull();
    await expect.poll(() => model.inFlight).toBe(0);

    // Long after every model call would have answered: none was, and the session holds no turn.
    await sleep(MODEL_DELAY_MS);
    expect(model).toMatchObject({ received: 3, answered: 0, abandoned: 3 });
    const { sessions } = await json(await server.request(`/api/agents/${agentId}/sessions`));
    const session = sessions.find((s: { id: string }) => s.id === `pulse:${agentId}`);
    expect(session?.messageCount ?? 0).toBe(0);
  }, 20_000);
});
