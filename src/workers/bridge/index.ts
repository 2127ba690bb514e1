import { statSync } from "node:fs";
import { ACTS_FOR_AGENT } from "../../engine/acting-agent.ts";
import { publishEvent } from "../../engine/events.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { isPrivileged, requireAdmin } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError, badRequest, conflict, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { type NetworkPolicy, systemResolver } from "../../shared/net/guarded-request.ts";
import { checkWebUrl } from "../../shared/net/ssrf.ts";
import { findExecutable } from "../../shared/process/supervise.ts";
import { assertAgentRef, requireRealm } from "../../shared/realm-refs.ts";
import { RealmRunShare } from "../../shared/realm-share.ts";
import { type Execution, execute } from "./execute.ts";
import { PROCESS_KINDS } from "./kinds.ts";
import {
  type BridgeRun,
  bridgeRun,
  DEFAULT_TIMEOUT_SECS,
  invokeInput,
  invokeStarted,
  listInput,
  purgeRealmInput,
  type Runtime,
  registerInput,
  runIdInput,
  runPage,
  runsInput,
  runtimePage,
  runtimeRecord,
} from "./schema.ts";
import {
  ALL_RUNS_INDEX,
  buildRunIndexes,
  finishRecord,
  interruptLeftovers,
  listRuntimes,
  purgeRealmRuns,
  RUNS_SCOPE,
  RUNTIMES_SCOPE,
  realmRunsIndex,
  runsPage,
  startRecord,
} from "./store.ts";

export interface BridgeOptions {
  /** Tests only: lets http runtimes reach loopback and private addresses. */
  allowPrivateNetwork?: boolean;
  /** False in a process that does not serve (a CLI command): runs of the serving process are left alone. */
  startup?: boolean;
  /** Runs of one realm's keys going at once on this node (AGENTOS_BRIDGE_RUNS_PER_REALM); default 16. */
  runsPerRealm?: number;
}

const DEFAULT_RUNS_PER_REALM = 16;

const TOPIC = "bridge.run";

/**
 * The bridge to external runtimes (DESIGN §5): processes, HTTP endpoints and coding CLIs, run
 * supervised. Registering and cancelling are admin-only (a realm key never chooses what the host runs);
 * an admin may open a runtime to realms, whose keys and agents (as a tool) may then invoke it.
 */
export function registerBridge(worker: WorkerClient, options: BridgeOptions = {}): { ready: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const policy: NetworkPolicy = {
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
    resolve: systemResolver,
  };
  const local = new Map<string, Execution>();
  // An invoke answers at once, so no request slot holds its process: a realm's keys (and agents) would
  // start processes, each holding a megabyte of output, without bound.
  const realmShare = new RealmRunShare(options.runsPerRealm ?? DEFAULT_RUNS_PER_REALM);
  const publish = (run: BridgeRun) =>
    publishEvent(trigger, TOPIC, {
      type: run.status === "running" ? "started" : run.status,
      runId: run.id,
      runtimeId: run.runtimeId,
      realmId: run.realmId,
    });

  const loadRuntime = async (id: string): Promise<Runtime> => {
    const runtime = await state.get<Runtime>(RUNTIMES_SCOPE, id);
    if (!runtime) throw notFound(`Runtime ${id} not found`);
    return runtime;
  };

  /** Admins reach every run; a realm key only its realm's. Others' runs read as missing. */
  const loadRun = async (runId: string, ctx: InvocationContext): Promise<BridgeRun> => {
    const run = await state.get<BridgeRun>(RUNS_SCOPE, runId);
    if (
      !run ||
      (!isPrivileged(ctx.auth) && (ctx.auth.kind !== "realm" || run.realmId !== ctx.auth.realmId))
    ) {
      throw notFound(`Run ${runId} not found`);
    }
    return run;
  };

  worker.registerFunction(
    {
      id: "bridge::register",
      description: "Register an external runtime (admin): process, http or a coding CLI",
      input: registerInput,
      output: runtimeRecord,
    },
    async (input, ctx) => {
      requireAdmin(ctx);
      if (input.kind === "http") checkWebUrl(input.url as string, policy);
      else {
        const command = input.command ?? PROCESS_KINDS[input.kind].executable ?? "";
        if (!findExecutable(command)) {
          throw badRequest(
            `command: ${command} was not found on this host's PATH (install it, or give its full path)`,
          );
        }
        // Else every run failed to start, each after it was recorded.
        if (input.workDir !== undefined && !isDirectory(input.workDir)) {
          throw badRequest(`workDir: ${input.workDir} is not a directory on this host`);
        }
      }
      const runtime: Runtime = {
        ...input,
        id: newId("rt"),
        timeoutSecs: input.timeoutSecs ?? DEFAULT_TIMEOUT_SECS,
        createdAt: nowIso(),
      };
      await state.set(RUNTIMES_SCOPE, runtime.id, runtime, 0);
      return runtime;
    },
  );

  worker.registerFunction(
    {
      id: "bridge::list",
      description: "The runtimes the caller may invoke: {runtimes, count}",
      input: listInput,
      output: runtimePage,
    },
    async (_input, ctx) => {
      const all = await listRuntimes(state);
      // Headers and environment may carry the runtime's credentials: only admins see their values.
      const runtimes = isPrivileged(ctx.auth)
        ? all
        : all.filter((runtime) => mayInvoke(runtime, ctx)).map(withoutSecrets);
      return { runtimes, count: runtimes.length };
    },
  );

  /** The run's process (or request) started; a runtime the kernel refuses ends the run failed, a 422. */
  const startExecution = async (
    runtime: Runtime,
    run: BridgeRun,
    input: { context: unknown; prompt?: string },
  ): Promise<Execution> => {
    try {
      return execute(runtime, run, input, policy);
    } catch (error) {
      const message = `The runtime could not be started: ${(error as Error).message}`;
      await finishRecord(state, { ...run, status: "failed", error: message, finishedAt: nowIso() });
      throw new AppError("unprocessable", message);
    }
  };

  worker.registerFunction(
    {
      id: "bridge::invoke",
      description:
        "Hand work to a runtime: {runtimeId, agentId?, context?, prompt?} → {runId, status} at once",
      input: invokeInput,
      metadata: ACTS_FOR_AGENT,
      output: invokeStarted,
    },
    async ({ runtimeId, agentId, context, prompt }, ctx) => {
      const runtime = await loadRuntime(runtimeId);
      // A runtime not open to the key's realm is as missing as none (existence is not revealed).
      if (!mayInvoke(runtime, ctx)) throw notFound(`Runtime ${runtimeId} not found`);
      const realmId = ctx.auth.kind === "realm" ? ctx.auth.realmId : null;
      if (realmId) {
        await requireRealm(trigger, realmId, { write: true });
        if (agentId) await assertAgentRef(trigger, agentId, realmId);
      }
      if (runtime.kind !== "http" && PROCESS_KINDS[runtime.kind].needsPrompt && !prompt) {
        throw badRequest(`prompt: a ${runtime.kind} runtime runs the tool with a prompt`);
      }
      const run: BridgeRun = {
        id: newId("brun"),
        runtimeId,
        kind: runtime.kind,
        agentId: agentId ?? null,
        realmId,
        status: "running",
        output: null,
        error: null,
        exitCode: null,
        pid: null,
        truncated: false,
        startedAt: nowIso(),
        finishedAt: null,
      };
      if (realmId && !realmShare.tryEnter(realmId)) throw tooManyRuns(realmId, realmShare.limit);
      const leave = () => {
        if (realmId) realmShare.leave(realmId);
      };
      let execution: Execution;
      try {
        // Recorded before the process starts: a crash from here on finds it and cleans up after it.
        await startRecord(state, run);
        execution = await startExecution(runtime, run, { context, prompt });
      } catch (error) {
        leave();
        throw error;
      }
      local.set(run.id, execution);
      if (execution.pid !== null) await state.set(RUNS_SCOPE, run.id, { ...run, pid: execution.pid });
      publish(run);
      void execution.done
        .then(async (finished) => {
          await finishRecord(state, finished);
          publish(finished);
        })
        // The store is closing (the service stops): the next start marks the run interrupted. Left
        // unhandled, the rejection would end the process.
        .catch(() => undefined)
        .finally(() => {
          local.delete(run.id);
          leave();
        });
      return { runId: run.id, status: run.status };
    },
  );

  worker.registerFunction(
    {
      id: "bridge::run",
      description: "One run: {id, runtimeId, agentId, status, output, error, exitCode, ...}",
      input: runIdInput,
      output: bridgeRun,
    },
    ({ runId }, ctx) => loadRun(runId, ctx),
  );

  worker.registerFunction(
    {
      id: "bridge::runs",
      description:
        "Runs the caller may see, newest first, of one runtime with {runtimeId}: {runs, nextCursor}",
      input: runsInput,
      output: runPage,
    },
    async ({ runtimeId, limit, cursor }, ctx) => {
      if (!isPrivileged(ctx.auth) && ctx.auth.kind !== "realm") return { runs: [], nextCursor: null };
      const index = ctx.auth.kind === "realm" ? realmRunsIndex(ctx.auth.realmId) : ALL_RUNS_INDEX;
      return runsPage(state, index, { runtimeId, limit, cursor });
    },
  );

  worker.registerFunction(
    {
      id: "bridge::cancel",
      description: "Stop a running run (admin): its process group gets TERM, then KILL",
      input: runIdInput,
      output: bridgeRun,
    },
    async ({ runId }, ctx) => {
      requireAdmin(ctx);
      const run = await loadRun(runId, ctx);
      if (run.status !== "running")
        throw conflict(`Run ${runId} is ${run.status}: only a running run can be cancelled`);
      const execution = local.get(runId);
      if (!execution) throw conflict(`Run ${runId} is not executing on this node`);
      execution.cancel();
      await execution.done;
      return loadRun(runId, ctx);
    },
  );

  worker.registerFunction(
    {
      id: "bridge::purge_realm",
      description: "Delete a realm's bridge runs (part of a realm delete)",
      input: purgeRealmInput,
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      return { purged: await purgeRealmRuns(state, realmId) };
    },
  );

  worker.registerRoute("bridge::register", "POST", "/api/bridge/runtimes", { status: 201 });
  worker.registerRoute("bridge::list", "GET", "/api/bridge/runtimes");
  worker.registerRoute("bridge::invoke", "POST", "/api/bridge/invoke", { status: 202 });
  worker.registerRoute("bridge::runs", "GET", "/api/bridge/runs");
  worker.registerRoute("bridge::run", "GET", "/api/bridge/runs/:runId");
  worker.registerRoute("bridge::cancel", "POST", "/api/bridge/runs/:runId/cancel");

  const ready = (async () => {
    if (options.startup === false) return;
    for (const run of await interruptLeftovers(state)) publish(run);
    await buildRunIndexes(state);
  })();
  return { ready };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function tooManyRuns(realmId: string, limit: number): AppError {
  return new AppError(
    "rate_limited",
    `Realm ${realmId} has ${limit} bridge runs going, the most it may at once (AGENTOS_BRIDGE_RUNS_PER_REALM): invoke again when one has finished`,
  );
}

/** Admins invoke any runtime; a realm's key (or its agents) only those the admin opened to the realm. */
function mayInvoke(runtime: Runtime, ctx: InvocationContext): boolean {
  if (isPrivileged(ctx.auth)) return true;
  return ctx.auth.kind === "realm" && (runtime.realms ?? []).includes(ctx.auth.realmId);
}

function withoutSecrets(runtime: Runtime): Runtime {
  const hidden = (values?: Record<string, string>) =>
    values && Object.fromEntries(Object.keys(values).map((name) => [name, "[redacted]"]));
  return { ...runtime, headers: hidden(runtime.headers), env: hidden(runtime.env) };
}
