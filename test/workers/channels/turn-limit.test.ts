import { describe, expect, it } from "vitest";
import type { TriggerRequest } from "../../../src/engine/types.ts";
import { DEFAULT_REALM_ID } from "../../../src/shared/access.ts";
import { ADAPTERS } from "../../../src/workers/channels/adapters.ts";
import { type ChannelDeps, pruneSeen, receive } from "../../../src/workers/channels/pipeline.ts";
import { queueScope } from "../../../src/workers/channels/queue.ts";
import type { ChannelJob } from "../../../src/workers/channels/schema.ts";
import { TURN_COUNTS_SCOPE } from "../../../src/workers/channels/turn-limit.ts";
import { fixture } from "../../channels/fixtures.ts";
import { stateEachTest } from "../../helpers/engine.ts";

const state = stateEachTest();
const matrix = ADAPTERS.find((adapter) => adapter.platform === "matrix");
const { envelope, secret } = fixture("matrix", "transaction");
// The m.room.message example of the specification's transaction.
const example = (envelope.body as { events: Array<Record<string, unknown>> }).events[1] ?? {};
const ROOM = example.room_id as string;

/** The receive pipeline with the vault holding the homeserver token, and the audit records it made. */
function pipeline() {
  const audited: Array<Record<string, unknown>> = [];
  const trigger = async (request: TriggerRequest) => {
    if (request.function_id === "vault::get") return { value: secret };
    if (request.function_id === "security::audit") audited.push(request.payload as Record<string, unknown>);
    return undefined;
  };
  const deps: ChannelDeps = {
    state,
    trigger: trigger as ChannelDeps["trigger"],
    env: {},
    kick: () => undefined,
    unfinished: { count: 0, limit: 1 },
  };
  return { deps, audited };
}

/**
 * A transaction of `count` m.text messages (each its own event) in `room`, sent in turn by `senders`
 * members (by default enough that no one of them reaches their own share of the room's turns).
 */
function botMessages(first: number, count: number, room = ROOM, senders = 5) {
  const events = Array.from({ length: count }, (_, i) => ({
    ...example,
    event_id: `$bot-${first + i}:example.org`,
    room_id: room,
    sender: `@bot${(first + i) % senders}:example.org`,
    content: { msgtype: "m.text", body: `answer ${first + i}` },
  }));
  const rawBody = JSON.stringify({ events });
  return { ...envelope, rawBody, body: JSON.parse(rawBody) };
}

async function queuedTexts(): Promise<string[]> {
  const texts: string[] = [];
  for await (const { value } of state.scan<ChannelJob>(queueScope(DEFAULT_REALM_ID))) texts.push(value.text);
  return texts;
}

describe("the turn limit of a Matrix room", () => {
  it("takes at most the platform's turns per room and window, and the room's next window again", async () => {
    if (!matrix?.turnLimit) throw new Error("Matrix has no turn limit");
    const { turns, windowMs } = matrix.turnLimit;
    const { deps, audited } = pipeline();
    // Mid-window, so the whole test runs within one window and the next.
    const start = Math.floor(Date.now() / windowMs) * windowMs + windowMs / 2;
    const realNow = Date.now;
    Date.now = () => start;
    try {
      expect((await receive(deps, matrix, botMessages(0, turns + 5))).status_code).toBe(200);
      expect(await queuedTexts()).toHaveLength(turns);
      // Another room has turns of its own.
      await receive(deps, matrix, botMessages(100, 1, "!other:example.org"));
      expect(await queuedTexts()).toHaveLength(turns + 1);
      expect(audited.filter((record) => (record.detail as { dropped?: string }).dropped)).toHaveLength(5);

      Date.now = () => start + windowMs;
      await receive(deps, matrix, botMessages(200, 1));
      expect((await queuedTexts()).filter((text) => text === "answer 200")).toHaveLength(1);
      // The ended window's counts are pruned; the current one's stay.
      await pruneSeen(state, start + windowMs);
      const left: string[] = [];
      for await (const { key } of state.scan(TURN_COUNTS_SCOPE)) left.push(key);
      expect(left).toEqual([`matrix:${ROOM}`]);
    } finally {
      Date.now = realNow;
    }
  });
});

describe("a member's share of a Matrix room's turns", () => {
  it("keeps one member from spending the room's turns: the others are still answered", async () => {
    if (!matrix?.turnLimit?.perSender) throw new Error("Matrix has no per-sender turn limit");
    const { turns, perSender, windowMs } = matrix.turnLimit;
    const { deps, audited } = pipeline();
    const start = Math.floor(Date.now() / windowMs) * windowMs + windowMs / 2;
    const realNow = Date.now;
    Date.now = () => start;
    try {
      // One member floods the room with more messages than the room's whole allowance.
      await receive(deps, matrix, botMessages(0, turns + 5, ROOM, 1));
      expect(await queuedTexts()).toHaveLength(perSender);
      expect(audited.filter((record) => (record.detail as { dropped?: string }).dropped)).toHaveLength(
        turns + 5 - perSender,
      );
      // Another member of the room is still answered, in the same window.
      await receive(deps, matrix, botMessages(1000, 1, ROOM, 1001));
      expect(await queuedTexts()).toContain("answer 1000");
    } finally {
      Date.now = realNow;
    }
  });
});
