import { describe, expect, it } from "vitest";
import { hmac } from "../../../src/channels/envelope.ts";
import type { TriggerRequest } from "../../../src/engine/types.ts";
import { DEFAULT_REALM_ID } from "../../../src/shared/access.ts";
import { ADAPTERS } from "../../../src/workers/channels/adapters.ts";
import { type ChannelDeps, receive, senderNotice } from "../../../src/workers/channels/pipeline.ts";
import { queueScope } from "../../../src/workers/channels/queue.ts";
import type { ChannelJob } from "../../../src/workers/channels/schema.ts";
import type { Adapter } from "../../../src/workers/channels/sender.ts";
import { DEFAULT_SENDER_TURNS, SENDER_WINDOW_MS } from "../../../src/workers/channels/turn-limit.ts";
import { fixture } from "../../channels/fixtures.ts";
import { stateEachTest } from "../../helpers/engine.ts";

const state = stateEachTest();
const adapter = (platform: string) => ADAPTERS.find((one) => one.platform === platform) as Adapter;
const telegram = adapter("telegram");
const SECRET = "tg-secret";

/** The receive pipeline over this test's state, with what it audited and told the observers. */
function pipeline(secret: string, senderTurns?: number) {
  const audited: Array<{ detail: { userId: string | null; dropped?: string } }> = [];
  const reported: Array<Record<string, unknown>> = [];
  const turns: unknown[] = [];
  const trigger = async (request: TriggerRequest) => {
    if (request.function_id === "vault::get") return { value: secret };
    if (request.function_id === "security::audit") audited.push(request.payload as (typeof audited)[0]);
    if (request.function_id === "engine::telemetry")
      reported.push(request.payload as Record<string, unknown>);
    if (request.function_id === "agent::chat") {
      turns.push(request.payload);
      return { content: "an answer" };
    }
    return undefined;
  };
  const deps: ChannelDeps = {
    state,
    trigger: trigger as ChannelDeps["trigger"],
    env: {},
    kick: () => undefined,
    unfinished: { count: 0, limit: 1 },
    ...(senderTurns === undefined ? {} : { senderTurns }),
  };
  const dropped = () => audited.filter((record) => record.detail.dropped);
  return { deps, audited, reported, turns, dropped };
}

let update = 0;
/** A Telegram group message, from `from` (no sender when undefined). */
function telegramMessage(chat: number, from: number | undefined, text = `message ${update}`) {
  const rawBody = JSON.stringify({
    update_id: ++update,
    message: { text, chat: { id: chat }, ...(from === undefined ? {} : { from: { id: from } }) },
  });
  return {
    body: JSON.parse(rawBody),
    rawBody,
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET },
    query_params: {},
    path_params: {},
    method: "POST",
    path: "/webhook/telegram",
  };
}

async function queued(): Promise<ChannelJob[]> {
  const jobs: ChannelJob[] = [];
  for await (const { value } of state.scan<ChannelJob>(queueScope(DEFAULT_REALM_ID))) jobs.push(value);
  return jobs;
}

/** Runs `test` with the clock mid-window (then `later(ms)` moves it on), restoring it after. */
async function atMidWindow(test: (later: (ms: number) => void) => Promise<void>): Promise<void> {
  const start = Math.floor(Date.now() / SENDER_WINDOW_MS) * SENDER_WINDOW_MS + SENDER_WINDOW_MS / 2;
  const realNow = Date.now;
  Date.now = () => start;
  try {
    await test((ms) => {
      Date.now = () => start + ms;
    });
  } finally {
    Date.now = realNow;
  }
}

describe("one sender's turns in a channel (AGENTOS_CHANNEL_SENDER_TURNS)", () => {
  it("bounds a member flooding a Telegram group by default, tells them once, and answers the others", async () => {
    const { deps, dropped, reported } = pipeline(SECRET);
    await atMidWindow(async (later) => {
      for (let i = 0; i < DEFAULT_SENDER_TURNS + 5; i++) {
        expect((await receive(deps, telegram, telegramMessage(-100, 7))).status_code).toBe(200);
      }
      const jobs = await queued();
      expect(jobs.filter((job) => job.phase === "turn")).toHaveLength(DEFAULT_SENDER_TURNS);
      // Told once, in a reply that needs no turn, to the chat the messages came from.
      expect(jobs.filter((job) => job.phase === "deliver")).toEqual([
        expect.objectContaining({ reply: senderNotice(), replyTo: { chat_id: "-100" } }),
      ]);
      expect(dropped()).toHaveLength(5);
      expect(dropped()[0]?.detail).toMatchObject({
        userId: "7",
        dropped: "the sender's allowance of turns in the channel (AGENTOS_CHANNEL_SENDER_TURNS)",
      });
      expect(reported.filter((event) => event.type === "channel_dropped")).toEqual(
        Array(5).fill({ type: "channel_dropped", platform: "telegram", over: "sender" }),
      );

      // Another member of the group, and the same member in another chat, are still answered.
      await receive(deps, telegram, telegramMessage(-100, 8, "from 8"));
      await receive(deps, telegram, telegramMessage(-200, 7, "elsewhere"));
      const texts = (await queued()).map((job) => job.text);
      expect(texts).toEqual(expect.arrayContaining(["from 8", "elsewhere"]));

      // The next window the member has their allowance again.
      later(SENDER_WINDOW_MS);
      await receive(deps, telegram, telegramMessage(-100, 7, "next window"));
      expect((await queued()).map((job) => job.text)).toContain("next window");
    });
  });

  it("counts messages without a sender under the channel, telling no one", async () => {
    const { deps, dropped } = pipeline(SECRET, 3);
    await atMidWindow(async () => {
      for (let i = 0; i < 5; i++) await receive(deps, telegram, telegramMessage(-300, undefined));
      expect(await queued()).toHaveLength(3);
      expect(dropped().map((record) => record.detail.dropped)).toEqual(
        Array(2).fill("the channel's allowance for messages without a sender (AGENTOS_CHANNEL_SENDER_TURNS)"),
      );
      // A member's own allowance is apart from it.
      await receive(deps, telegram, telegramMessage(-300, 9, "a member"));
      expect((await queued()).map((job) => job.text)).toContain("a member");
    });
  });

  it("bounds nothing when set to 0", async () => {
    const { deps, dropped } = pipeline(SECRET, 0);
    await atMidWindow(async () => {
      for (let i = 0; i < DEFAULT_SENDER_TURNS + 5; i++)
        await receive(deps, telegram, telegramMessage(-400, 7));
      expect(await queued()).toHaveLength(DEFAULT_SENDER_TURNS + 5);
      expect(dropped()).toHaveLength(0);
    });
  });

  it("tells a Teams sender in the webhook's own response, once a window", async () => {
    const teams = adapter("teams");
    const { envelope, secret } = fixture("teams", "outgoing-webhook");
    const { deps, turns, dropped } = pipeline(secret, 1);
    const message = (id: string) => {
      const body = { ...(envelope.body as Record<string, unknown>), id };
      const rawBody = JSON.stringify(body);
      const signature = hmac("sha256", Buffer.from(secret, "base64"), rawBody, "base64");
      return {
        ...envelope,
        body,
        rawBody,
        headers: { ...envelope.headers, authorization: `HMAC ${signature}` },
      };
    };
    await atMidWindow(async () => {
      const answered = await receive(deps, teams, message("1"));
      expect(JSON.stringify(answered.body)).toContain("an answer");
      const told = await receive(deps, teams, message("2"));
      expect(told.status_code).toBe(200);
      expect(JSON.stringify(told.body)).toContain(JSON.stringify(senderNotice(1)).slice(1, -1));
      const quiet = await receive(deps, teams, message("3"));
      expect(quiet.status_code).toBe(200);
      expect(JSON.stringify(quiet.body)).not.toContain("faster than I can answer");
      expect(turns).toHaveLength(1);
      expect(dropped()).toHaveLength(2);
      expect(await queued()).toHaveLength(0);
    });
  });

  it("lowers a Matrix member's share of the room's turns when set below it, and tells no one there", async () => {
    const matrix = adapter("matrix");
    const { envelope, secret } = fixture("matrix", "transaction");
    const example = (envelope.body as { events: Array<Record<string, unknown>> }).events[1] ?? {};
    const { deps, dropped } = pipeline(secret, 2);
    const events = Array.from({ length: 5 }, (_, i) => ({
      ...example,
      event_id: `$flood-${i}:example.org`,
      sender: "@member:example.org",
      content: { msgtype: "m.text", body: `flood ${i}` },
    }));
    const rawBody = JSON.stringify({ events });
    await atMidWindow(async () => {
      await receive(deps, matrix, { ...envelope, rawBody, body: JSON.parse(rawBody) });
      const jobs = await queued();
      expect(jobs.map((job) => job.phase)).toEqual(["turn", "turn"]);
      expect(dropped()).toHaveLength(3);
    });
  });
});
