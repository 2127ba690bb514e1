import { z } from "zod";
import type { Envelope } from "../../channels/envelope.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, realmFilter, requireAdmin } from "../../shared/access.ts";
import { systemResolver } from "../../shared/net/guarded-request.ts";
import { noContent } from "../../shared/outputs.ts";
import { ADAPTERS } from "./adapters.ts";
import { bind, listBindings, unbind } from "./bindings.ts";
import { missingVaultEntries } from "./credentials.ts";
import { inbound } from "./generic.ts";
import { type ChannelDeps, pruneSeen, receive, work } from "./pipeline.ts";
import {
  FAILED_SCOPE,
  failedJobs,
  LEGACY_QUEUE_SCOPE,
  QUEUED_REALMS_SCOPE,
  QueueRunner,
  queueScope,
  recoverLeases,
} from "./queue.ts";
import type { ChannelJob } from "./schema.ts";
import {
  BINDINGS_SCOPE,
  type Binding,
  bindAnswer,
  bindInput,
  bindingPage,
  failedAnswer,
  genericWebhookBody,
  listBindingsInput,
  unbindInput,
} from "./schema.ts";
import { sendInput, sendToChannel } from "./send.ts";

export interface ChannelsOptions {
  env: NodeJS.ProcessEnv;
  allowPrivateNetwork?: boolean;
  /** False for a process that does no background work (a CLI command): no queue sweep is scheduled. */
  background?: boolean;
  /** Cluster mode: leases of other nodes are left to expire instead of being taken over at start. */
  cluster?: boolean;
  /** Jobs worked on at once by this process, all realms together (default DEFAULT_CONCURRENCY). */
  concurrency?: number;
  /** Turns one sender may cause per channel and window (AGENTOS_CHANNEL_SENDER_TURNS; 0: no bound). */
  senderTurns?: number;
}

const envelopeInput = z.object({}).passthrough();

/** Channels: the generic webhook, one verified webhook per platform, bindings, and the reply queue. */
export function registerChannels(worker: WorkerClient, options: ChannelsOptions): void {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const adapters = new Map(ADAPTERS.map((adapter) => [adapter.platform, adapter]));
  const runner = new QueueRunner(
    state,
    (job) => work(deps, adapters, job),
    options.concurrency,
    () => void sweep(),
  );
  const sweep = () => runner.sweep().catch(() => 0);
  const deps: ChannelDeps = {
    state,
    trigger,
    env: options.env,
    kick: () => void sweep(),
    unfinished: { count: 0, limit: runner.limit },
    ...(options.senderTurns === undefined ? {} : { senderTurns: options.senderTurns }),
  };
  const policy = {
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
    allowedAddresses: new Set<string>(),
    resolve: systemResolver,
  };

  worker.registerFunction(
    {
      id: "channel::webhook::inbound",
      description:
        "Generic webhook: a message to the channel's agent, answered with {response}. Authenticated by an API key, or by X-Signature-256: sha256=<hex HMAC-SHA256 of the raw body> under the vault secret channel:<channelId>:secret; with X-Signature-Timestamp: <unix seconds>, of <timestamp>.<raw body>, within 300 s and taken once",
      input: envelopeInput,
      body: genericWebhookBody,
      output: z.object({ response: z.string().describe("The agent's answer") }),
    },
    (envelope, ctx) => inbound({ ...deps, policy }, envelope as unknown as Envelope, ctx.auth),
  );
  worker.registerRoute("channel::webhook::inbound", "POST", "/webhook/:channelId", {
    envelope: true,
    api_key: "optional",
  });

  for (const adapter of ADAPTERS) {
    const id = `channel::${adapter.platform}::webhook`;
    worker.registerFunction(
      {
        id,
        description: `${adapter.platform} webhook: verified, acknowledged at once, answered through the platform's API`,
        input: envelopeInput,
      },
      (envelope) => receive(deps, adapter, envelope as unknown as Envelope),
    );
    worker.registerRoute(id, "POST", `/webhook/${adapter.platform}`, { envelope: true });
    if (adapter.verifyGet)
      worker.registerRoute(id, "GET", `/webhook/${adapter.platform}`, { envelope: true });
    for (const route of adapter.routes ?? [])
      worker.registerRoute(id, route.method, route.path, { envelope: true });
  }

  worker.registerFunction(
    {
      id: "channel::bind",
      description:
        "Bind a platform channel to an agent of the caller's realm: {platform, channelId, agentId}",
      input: bindInput,
      output: bindAnswer,
    },
    async (input, ctx) => ({
      ...(await bind(state, trigger, input, ctx.auth)),
      warnings:
        input.platform === "webhook" || adapters.has(input.platform)
          ? await missingVaultEntries(trigger, adapters.get(input.platform), input.channelId)
          : [],
    }),
  );
  worker.registerFunction(
    {
      id: "channel::bindings",
      description: "Channel bindings the caller may see: {bindings, nextCursor}",
      input: listBindingsInput,
      output: bindingPage,
    },
    (input, ctx) => listBindings(state, trigger, ctx, input),
  );
  worker.registerFunction(
    {
      id: "channel::unbind",
      description: "Remove a channel's binding",
      input: unbindInput,
      output: noContent,
    },
    (input, ctx) => unbind(state, trigger, ctx, input),
  );
  worker.registerFunction(
    {
      id: "channel::failed",
      description: "Replies that could not be delivered (after their retries), newest last: {failed}",
      input: z.strictObject({ realmId: z.string().min(1).max(256).optional() }),
      output: failedAnswer,
    },
    async ({ realmId }, ctx) => {
      if (realmId !== undefined) assertRealmAccess(ctx, realmId);
      return { failed: await failedJobs(state, realmId ?? realmFilter(ctx)) };
    },
  );
  worker.registerRoute("channel::failed", "GET", "/api/channels/failed");
  worker.registerRoute("channel::bind", "POST", "/api/channels", { status: 201 });
  worker.registerRoute("channel::bindings", "GET", "/api/channels", { array_list: "bindings" });
  worker.registerRoute("channel::unbind", "DELETE", "/api/channels/:platform/:channelId");

  worker.registerFunction(
    {
      id: "channel::send",
      description:
        "Send text to a bound platform channel as its agent (queued and retried until delivered): {queued}",
      input: sendInput,
    },
    (input, ctx) => sendToChannel(deps, adapters, input, ctx),
  );

  worker.registerFunction(
    {
      id: "channel::sweep",
      description: "Run the channel jobs that are due (cron, internal)",
      input: z.object({}).passthrough(),
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      return { started: await sweep() };
    },
  );
  worker.registerFunction(
    {
      id: "channel::prune",
      description:
        "Forget delivered event ids older than a week and the turn counts of ended windows (cron, internal)",
      input: z.object({}).passthrough(),
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      return { pruned: await pruneSeen(state, Date.now()) };
    },
  );
  registerPurges(worker, state);
  if (options.background !== false) {
    if (!options.cluster) void recoverLeases(state).catch(() => 0);
    worker.registerTrigger({
      type: "cron",
      function_id: "channel::sweep",
      config: { expression: "* * * * * *" },
    });
    worker.registerTrigger({
      type: "cron",
      function_id: "channel::prune",
      config: { expression: "0 17 * * * *" },
    });
  }
}

function registerPurges(worker: WorkerClient, state: ReturnType<typeof stateClient>): void {
  /** The realm's bindings and jobs that `keep` refuses (its queue, and the legacy queue every realm shared). */
  const purge = async (realmId: string, keep: (binding: Binding) => boolean) => {
    let removed = 0;
    for await (const { key, value } of state.scan<Binding>(BINDINGS_SCOPE)) {
      if (!keep(value) && (await state.delete(BINDINGS_SCOPE, key))) removed++;
    }
    for (const scope of [LEGACY_QUEUE_SCOPE, queueScope(realmId)]) {
      for await (const { key, value } of state.scan<ChannelJob>(scope)) {
        if (!keep(value as unknown as Binding)) await state.delete(scope, key);
      }
    }
    for await (const { key, value } of state.scan<ChannelJob>(FAILED_SCOPE)) {
      if (!keep(value as unknown as Binding)) await state.delete(FAILED_SCOPE, key);
    }
    return { removed };
  };
  const id = z.string().min(1).max(256);
  worker.registerFunction(
    {
      id: "channel::purge_realm",
      description: "Delete a realm's channel bindings and queued replies (realm delete)",
      input: z.strictObject({ realmId: id }),
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      const purged = await purge(realmId, (item) => item.realmId !== realmId);
      await state.delete(QUEUED_REALMS_SCOPE, realmId);
      return purged;
    },
  );
  worker.registerFunction(
    {
      id: "channel::purge_agent",
      description: "Delete an agent's channel bindings and queued replies (agent delete)",
      input: z.strictObject({ realmId: id, agentId: id }),
    },
    ({ realmId, agentId }, ctx) => {
      requireAdmin(ctx);
      return purge(realmId, (item) => item.agentId !== agentId);
    },
  );
}
