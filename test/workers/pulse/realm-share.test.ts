import { afterEach, describe, expect, it } from "vitest";
import type { TelemetryEvent } from "../../../src/engine/telemetry.ts";
import { RealmRunShare } from "../../../src/shared/realm-share.ts";
import { createAgent, newRealm } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import { registered } from "./helpers.ts";

const EVERY_SECOND = "* * * * * *";

describe("a realm's share of cron runs", () => {
  it("gives each realm its own places, and them back", () => {
    const share = new RealmRunShare(2);
    expect([share.tryEnter("a"), share.tryEnter("a"), share.tryEnter("a")]).toEqual([true, true, false]);
    expect(share.tryEnter("b")).toBe(true);
    share.leave("a");
    expect(share.tryEnter("a")).toBe(true);
  });

  let fake: FakeOpenAI | undefined;
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    await fake?.close();
  });

  it("skips a tick of a realm whose share is taken (realm_busy) while another realm's agents still wake", async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      pulseRunsPerRealm: 1,
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
    });
    const busy = await newRealm(server);
    const quiet = await newRealm(server);
    const crowd = [await createAgent(server, busy), await createAgent(server, busy)];
    const alone = await createAgent(server, quiet);
    const events: Array<Extract<TelemetryEvent, { type: "pulse_run" }>> = [];
    server.service.engine.onTelemetry((event) => {
      if (event.type === "pulse_run") events.push(event);
    });
    // Every model answer takes a while: the busy realm's two agents want to run at the same time.
    fake.reply(...Array.from({ length: 40 }, () => ({ content: "slow", delayMs: 1500 })));
    for (const agentId of crowd) await registered(server, { realmId: busy, agentId, cron: EVERY_SECOND });
    await registered(server, { realmId: quiet, agentId: alone, cron: EVERY_SECOND });
    await eventually(
      () =>
        events.some((event) => event.realmId === busy && event.reason === "realm_busy") &&
        events.some((event) => event.agentId === alone && event.outcome !== "skipped"),
      20_000,
    );
    expect(events.filter((event) => event.realmId === quiet && event.reason === "realm_busy")).toEqual([]);
  }, 40_000);
});
