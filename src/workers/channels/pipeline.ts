import { type Envelope, type Inbound, ok, type Reply, refused } from "../../channels/envelope.ts";
import { splitReply } from "../../channels/split-reply.ts";
import { call } from "../../engine/call.ts";
import { DEFAULT_TIMEOUT_MS } from "../../engine/engine.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { report } from "../../engine/telemetry.ts";
import { type Principal, systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { DEFAULT_REALM_ID } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { isAppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { vaultSecret } from "../../shared/vault-secret.ts";
import { bindingAt } from "./bindings.ts";
import { replyToken } from "./credentials.ts";
import { enqueue, replaceQueued } from "./queue.ts";
import type { Binding, ChannelJob } from "./schema.ts";
import type { Adapter } from "./sender.ts";
import {
  DEFAULT_SENDER_TURNS,
  type Dropped,
  overTurnLimit,
  SENDER_WINDOW_MS,
  TURN_COUNTS_SCOPE,
} from "./turn-limit.ts";

/** Events already taken (platforms retry): keys `<platform>:<event id>`. */
export const SEEN_SCOPE = "channel_seen";
/** The agent a channel without a binding reaches (spec: `default`). */
export const DEFAULT_AGENT = "default";

export interface ChannelDeps {
  state: StateClient;
  trigger: TriggerFn;
  env: NodeJS.ProcessEnv;
  /** Starts work on queued jobs now instead of at the next sweep. */
  kick(): void;
  /**
   * Turns that went on after their webhook was answered, in this process, and how many may: they hold
   * no request slot and no queue place, so past the limit a slow turn is stopped and queued as before.
   */
  unfinished: { count: number; readonly limit: number };
  /** Turns one sender may cause per channel and window (AGENTOS_CHANNEL_SENDER_TURNS; absent: its default). */
  senderTurns?: number;
}

/** The agent a platform channel reaches, with its realm (the turn runs as that realm). */
export async function bindingOf(
  deps: Pick<ChannelDeps, "state" | "trigger">,
  platform: string,
  channelId: string,
): Promise<Pick<Binding, "agentId" | "realmId">> {
  const found = await bindingAt(deps.state, deps.trigger, platform, channelId);
  return found ?? { agentId: DEFAULT_AGENT, realmId: DEFAULT_REALM_ID };
}

/**
 * An adapter's webhook: the platform's proof checked first (no secret configured: refused, never
 * open), then its events taken once each, queued durably for their agent, and acknowledged at once;
 * the agent's turn and the reply happen from the queue.
 */
export async function receive(deps: ChannelDeps, adapter: Adapter, envelope: Envelope): Promise<Reply> {
  const { platform } = adapter;
  if (envelope.method === "GET") {
    if (!adapter.verifyGet) return { status_code: 405, body: { error: `${platform} webhooks are POST` } };
    const names = adapter.vault;
    const token = names.verifyToken && (await vaultSecret(deps.trigger, names.verifyToken));
    if (!token) return refused(`${platform} is not configured: store ${names.verifyToken} in the vault`);
    return adapter.verifyGet(envelope, token);
  }
  const key = adapter.vault.secret;
  const proof = await vaultSecret(deps.trigger, key);
  if (!proof) return refused(`${platform} is not configured: store ${key} in the vault`);
  const problem = adapter.verify(envelope, proof, Date.now(), deps.env);
  if (problem) return refused(problem);
  const body = envelope.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return {
      status_code: 400,
      body: { error: `A ${platform} event is a JSON object or form data; this body is neither` },
    };
  }
  const { messages, reply } = adapter.parse(envelope);
  if (reply && messages.length === 0) return reply;
  const jobs: ChannelJob[] = [];
  const notices: ChannelJob[] = [];
  for (const message of messages) {
    if (message.eventId && !(await firstTime(deps.state, `${platform}:${message.eventId}`))) continue;
    const { agentId, realmId } = await bindingOf(deps, platform, message.channelId);
    const dropped = await overTurnLimit(deps.state, adapter, message, Date.now(), deps.senderTurns);
    auditMessage(deps.trigger, platform, agentId, message, dropped?.reason ?? null);
    if (dropped) {
      droppedMessage(deps.trigger, platform, dropped);
      // Told without a turn (no model call), once a window: the reply alone, through the queue.
      if (dropped.tell) {
        notices.push({
          id: newId("chj"),
          platform,
          realmId,
          agentId,
          sessionId: sessionOf(platform, message),
          phase: "deliver",
          text: "",
          replyTo: message.replyTo,
          reply: senderNotice(deps.senderTurns),
          delivered: 0,
          attempts: 0,
          createdAt: nowIso(),
        });
      }
      continue;
    }
    const job: ChannelJob = {
      id: newId("chj"),
      platform,
      realmId,
      agentId,
      sessionId: sessionOf(platform, message),
      phase: "turn",
      text: message.text,
      replyTo: message.replyTo,
      attempts: 0,
      createdAt: nowIso(),
    };
    jobs.push(job);
  }
  if (adapter.respond && notices.length === 0 && jobs.length === 1)
    return respondAtOnce(deps, adapter, jobs[0] as ChannelJob);
  if (adapter.respond && notices.length === 1 && jobs.length === 0)
    return adapter.respond(notices[0]?.reply as string);
  for (const job of [...jobs, ...notices]) await enqueue(deps.state, job);
  if (jobs.length + notices.length > 0) deps.kick();
  return reply ?? ok();
}

/** What a sender past their allowance is told (once a window), so they know why no answer comes. */
export const senderNotice = (turns = DEFAULT_SENDER_TURNS): string =>
  `You are sending messages faster than I can answer: I answer at most ${turns} of yours every ${SENDER_WINDOW_MS / 60_000} minutes, so I will not read the next ones you send for up to ${SENDER_WINDOW_MS / 60_000} minutes.`;

/** A message a turn limit dropped, counted in /metrics by platform and by whose count it ran past. */
function droppedMessage(trigger: TriggerFn, platform: string, dropped: Dropped): void {
  report(trigger, { type: "channel_dropped", platform, over: dropped.over });
}

/** Every message taken is recorded, with why it was dropped when a turn limit dropped it. */
function auditMessage(
  trigger: TriggerFn,
  platform: string,
  agentId: string,
  message: Inbound,
  dropped: string | null,
): void {
  void trigger({
    function_id: "security::audit",
    payload: {
      type: "channel_message",
      agentId,
      detail: {
        platform,
        channelId: message.channelId,
        userId: message.userId ?? null,
        eventId: message.eventId ?? null,
        ...(dropped ? { dropped } : {}),
      },
    },
    auth: systemPrincipal,
    action: { type: "void" },
  });
}

/**
 * The session a message's turn runs in: the channel's, or, where a channel holds many conversations
 * (a business number's customers), the conversation's, so no customer reads another's.
 */
export const sessionOf = (platform: string, message: Inbound): string =>
  [platform, message.channelId, ...(message.conversationId ? [message.conversationId] : [])].join(":");

/** The job's agent turn, as the channel's principal, in the channel's session (bounded by `timeoutMs`). */
const turnOf = (deps: ChannelDeps, job: ChannelJob, timeoutMs?: number) =>
  call(
    deps.trigger,
    "agent::chat",
    { agentId: job.agentId, message: job.text, sessionId: job.sessionId },
    { auth: channelPrincipal(job), ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }) },
  );

/** Who a channel's turn runs as: the bound agent's realm, named for the platform in audit records. */
const channelPrincipal = (job: ChannelJob): Principal => ({
  kind: "realm",
  realmId: job.realmId,
  keyId: `channel:${job.platform}`,
});

/**
 * How long a turn the webhook stopped waiting for has before its queued copy comes due: the turn's own
 * time limit and a minute. The copy only runs when this process died before the turn ended.
 */
const UNFINISHED_TURN_MS = DEFAULT_TIMEOUT_MS + 60_000;

/**
 * A platform that wants the answer in the response gets it, unless the turn is slow: then the turn goes
 * on and its answer is queued for delivery. It is not started again from the queue: a second turn would
 * run the first one's tool calls twice.
 */
async function respondAtOnce(deps: ChannelDeps, adapter: Adapter, job: ChannelJob): Promise<Reply> {
  const respond = adapter.respond as (text: string) => Reply;
  if (deps.unfinished.count >= deps.unfinished.limit) return respondOrRequeue(deps, adapter, job);
  const turn = turnOf(deps, job);
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), adapter.syncTimeoutMs ?? 9000);
  });
  const first = await Promise.race([
    turn.then(
      (answer) => ({ answer }),
      (error: Error) => ({ error }),
    ),
    slow,
  ]);
  clearTimeout(timer);
  if (first && "answer" in first) return respond(first.answer.content);
  if (first) return failedAtOnce(deps, respond, job, first.error);
  const dueMs = Date.now() + UNFINISHED_TURN_MS;
  deps.unfinished.count++;
  try {
    await enqueue(deps.state, job, dueMs);
  } catch (error) {
    turn.finally(() => deps.unfinished.count--).catch(() => undefined);
    throw error;
  }
  void turn
    .finally(() => deps.unfinished.count--)
    .then(
      (answer) => {
        const reply = answer.content.trim();
        const next: ChannelJob | null = reply ? { ...job, phase: "deliver", reply, delivered: 0 } : null;
        return replaceQueued(deps.state, job, dueMs, next);
      },
      // A failed turn stored nothing: the queue runs it again now, as it retries any failed turn.
      (error: unknown) => {
        turnFailed(deps.trigger, job, error);
        return replaceQueued(deps.state, job, dueMs, job);
      },
    )
    .then(deps.kick, () => undefined);
  return respond("Working on it: the answer will be posted here.");
}

/** The turn stopped at the platform's deadline, then queued to run again (no place to go on in). */
async function respondOrRequeue(deps: ChannelDeps, adapter: Adapter, job: ChannelJob): Promise<Reply> {
  const respond = adapter.respond as (text: string) => Reply;
  try {
    const answer = await turnOf(deps, job, adapter.syncTimeoutMs ?? 9000);
    return respond(answer.content);
  } catch (error) {
    if ((error as { code?: string }).code !== "timeout") return failedAtOnce(deps, respond, job, error);
    await enqueue(deps.state, job);
    deps.kick();
    return respond("Working on it: the answer will be posted here.");
  }
}

/** How long an event id is remembered: platforms retry for hours, never for a week. */
const SEEN_RETENTION_MS = 7 * 24 * 3600_000;

/**
 * Forgets the event ids taken more than a week before `nowMs`, and the turn counts of windows that
 * ended; answers how many entries went.
 */
export async function pruneSeen(state: StateClient, nowMs: number): Promise<number> {
  let pruned = 0;
  for await (const { key, value } of state.scan<{ at: string }>(SEEN_SCOPE)) {
    if (nowMs - Date.parse(value.at) > SEEN_RETENTION_MS && (await state.delete(SEEN_SCOPE, key))) pruned++;
  }
  for await (const { key, value, version } of state.scan<{ until: number }>(TURN_COUNTS_SCOPE)) {
    // Only the version read: a message counted meanwhile opened a new window, which stays.
    if (value.until <= nowMs && (await state.delete(TURN_COUNTS_SCOPE, key, version).catch(() => false)))
      pruned++;
  }
  return pruned;
}

/** True for the first delivery of an event: a create-only write, so two nodes cannot both take it. */
export async function firstTime(state: StateClient, key: string): Promise<boolean> {
  try {
    await state.set(SEEN_SCOPE, key, { at: nowIso() }, 0);
    return true;
  } catch {
    return false;
  }
}

/** One queued job's step: the agent's turn, then the reply in the platform's sized parts. */
export async function work(
  deps: ChannelDeps,
  adapters: Map<string, Adapter>,
  job: ChannelJob,
): Promise<ChannelJob | null> {
  const adapter = adapters.get(job.platform);
  if (!adapter) throw new Error(`No adapter for ${job.platform}`);
  if (job.phase === "turn") {
    const answer = await turnOf(deps, job).catch((error: unknown) => {
      turnFailed(deps.trigger, job, error);
      throw error;
    });
    const reply = answer.content.trim();
    return reply ? { ...job, phase: "deliver", reply, delivered: 0, lastError: undefined } : null;
  }
  const { names, token } = await replyToken(
    deps.trigger,
    adapter,
    adapter.channelToken?.channelOf(job.replyTo),
    job.unprompted === true,
  );
  if (names.length > 0 && !token) {
    const reason = `store ${names[0]} in the vault to reply on ${adapter.platform}`;
    deliveryFailed(deps.trigger, job, reason);
    throw new Error(reason);
  }
  const baseUrl =
    deps.env[`${adapter.platform.toUpperCase()}_API_BASE_URL`]?.trim() || adapter.defaultBaseUrl;
  const parts = splitReply(job.reply ?? "", adapter.maxChunk, adapter.maxParts);
  for (let part = job.delivered ?? 0; part < parts.length; part++) {
    try {
      await adapter.send({ baseUrl, token }, job.replyTo, parts[part] as string);
    } catch (error) {
      deliveryFailed(deps.trigger, job, (error as Error).message);
      // The parts already sent are not sent again.
      throw Object.assign(error as Error, { delivered: part });
    }
  }
  return null;
}

/**
 * A turn that failed while the platform waited: told to the service's observers, and to the chat user
 * in a sentence. Only a refusal of the request itself (4xx: a budget spent, an agent gone) is worded
 * there; anything else (a provider's failure, a missing key) is the operator's to read in the log.
 */
function failedAtOnce(
  deps: ChannelDeps,
  respond: (text: string) => Reply,
  job: ChannelJob,
  error: unknown,
): Reply {
  turnFailed(deps.trigger, job, error);
  const told = isAppError(error) && error.status < 500 ? `: ${error.message}` : "";
  return respond(`Sorry, that failed${told}.`);
}

/** A message's turn that failed, told to the service's observers (/metrics, a warning at its first). */
function turnFailed(trigger: TriggerFn, job: ChannelJob, error: unknown): void {
  stepFailed(trigger, "channel_turn", job, error instanceof Error ? error.message : String(error));
}

/** A reply the platform did not take, told to the service's observers. */
function deliveryFailed(trigger: TriggerFn, job: ChannelJob, reason: string): void {
  stepFailed(trigger, "channel_delivery", job, reason);
}

/**
 * A job's failed step: counted in /metrics by platform, and logged at the job's first failed attempt
 * (retries then run for minutes in silence).
 */
function stepFailed(
  trigger: TriggerFn,
  type: "channel_turn" | "channel_delivery",
  job: ChannelJob,
  reason: string,
): void {
  report(trigger, {
    type,
    platform: job.platform,
    realmId: job.realmId,
    agentId: job.agentId,
    jobId: job.id,
    attempt: job.attempts,
    outcome: "failed",
    reason: reason.slice(0, 1000),
  });
}
