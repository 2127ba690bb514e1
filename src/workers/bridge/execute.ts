import { MAX_VALUE_BYTES } from "../../engine/state/values.ts";
import { nowIso } from "../../shared/clock.ts";
import { guardedRequest, type NetworkPolicy } from "../../shared/net/guarded-request.ts";
import { type Finished, MAX_STDOUT_BYTES, supervise } from "../../shared/process/supervise.ts";
import { jsonOrText, PROCESS_KINDS } from "./kinds.ts";
import type { BridgeRun, Runtime } from "./schema.ts";
import { RUN_MARKER } from "./store.ts";

/** A run being executed here: how to stop it, and its end (the finished record). */
export interface Execution {
  pid: number | null;
  cancel(): void;
  done: Promise<BridgeRun>;
}

/** Runs `run` on `runtime`: a supervised process, or an HTTP POST under the SSRF rule. */
export function execute(
  runtime: Runtime,
  run: BridgeRun,
  input: { context: unknown; prompt?: string },
  policy: NetworkPolicy,
): Execution {
  const context = JSON.stringify({
    context: input.context ?? null,
    prompt: input.prompt ?? null,
    agentId: run.agentId,
    runId: run.id,
  });
  const execution =
    runtime.kind === "http" ? postTo(runtime, run, context, policy) : spawnRun(runtime, run, input, context);
  return { ...execution, done: execution.done.then(storable) };
}

/**
 * The most a run's output may take in its record, serialized: under the store's MAX_VALUE_BYTES, with
 * room for the rest. A megabyte of output can serialize to six (a control character becomes \u0001,
 * 1e20 twenty-one digits): the store refused the run, which stayed running, and the rejection ended the
 * service.
 */
const MAX_STORED_OUTPUT_BYTES = MAX_VALUE_BYTES - 1024 * 1024;
/** A UTF-16 unit serializes to at most 6 bytes (\uXXXX): a text this long always fits. */
const STORED_TEXT_CHARS = Math.floor(MAX_STORED_OUTPUT_BYTES / 6);
/** A tool's own error message can be its whole answer: the run keeps its start. */
const MAX_ERROR_CHARS = 2000;

/** The finished run as the store can take it: output too large once serialized is cut, as text. */
function storable(run: BridgeRun): BridgeRun {
  const error = run.error === null ? null : run.error.slice(0, MAX_ERROR_CHARS);
  const json = JSON.stringify(run.output) ?? "null";
  if (Buffer.byteLength(json) <= MAX_STORED_OUTPUT_BYTES) return { ...run, error };
  const text = typeof run.output === "string" ? run.output : json;
  return { ...run, error, output: text.slice(0, STORED_TEXT_CHARS), truncated: true };
}

function spawnRun(runtime: Runtime, run: BridgeRun, input: { prompt?: string }, context: string): Execution {
  const kind = PROCESS_KINDS[runtime.kind as Exclude<Runtime["kind"], "http">];
  const supervised = supervise({
    command: runtime.command ?? (kind.executable as string),
    args: kind.args(input.prompt ?? "", runtime.args ?? []),
    env: { ...runtime.env, AGENTOS_CONTEXT: context },
    cwd: runtime.workDir,
    stdin: kind.stdin ? kind.stdin(input.prompt ?? "", context) : context,
    timeoutMs: runtime.timeoutSecs * 1000,
    marker: [RUN_MARKER, run.id],
  });
  const done = supervised.done.then((finished) => ({
    ...run,
    pid: supervised.pid,
    ...outcome(runtime, finished),
  }));
  return { pid: supervised.pid, cancel: supervised.cancel, done };
}

function outcome(runtime: Runtime, finished: Finished): Partial<BridgeRun> {
  const base = { exitCode: finished.exitCode, truncated: finished.truncated, finishedAt: nowIso() };
  if (finished.reason === "spawn_failed") {
    return {
      ...base,
      status: "failed",
      output: null,
      error: `${runtime.command ?? runtime.kind} could not start: ${finished.spawnError}`,
    };
  }
  if (finished.reason === "timed_out" || finished.reason === "cancelled") {
    const error =
      finished.reason === "timed_out"
        ? `Timed out after ${runtime.timeoutSecs} s; the process group was killed`
        : "Cancelled; the process group was killed";
    return { ...base, status: finished.reason, output: finished.stdout || null, error };
  }
  const parsed = PROCESS_KINDS[runtime.kind as Exclude<Runtime["kind"], "http">].parse(finished.stdout);
  if (finished.exitCode !== 0 || parsed.error) {
    const stderr = finished.stderr.trim().slice(-2000);
    const error =
      parsed.error ??
      `Exited with ${finished.exitCode ?? `signal ${finished.signal}`}${stderr ? `: ${stderr}` : ""}`;
    return { ...base, status: "failed", output: parsed.output, error };
  }
  return { ...base, status: "completed", output: parsed.output, error: null };
}

/** `http`: the context POSTed to the runtime's URL (SSRF rule, bounded answer, the runtime's timeout). */
function postTo(runtime: Runtime, run: BridgeRun, context: string, policy: NetworkPolicy): Execution {
  const controller = new AbortController();
  const done = guardedRequest(runtime.url as string, {
    method: "POST",
    headers: { "content-type": "application/json", ...(runtime.headers ?? {}) },
    body: context,
    maxBytes: MAX_STDOUT_BYTES,
    timeoutMs: runtime.timeoutSecs * 1000,
    signal: controller.signal,
    // The run's realm: its lookups count against that realm's share of the resolver.
    policy: { ...policy, realm: run.realmId ?? undefined },
  }).then(
    (response): BridgeRun => {
      const output = jsonOrText(response.body.toString("utf8"));
      const ok = response.status >= 200 && response.status < 300;
      return {
        ...run,
        status: ok ? "completed" : "failed",
        output,
        error: ok ? null : `${runtime.url} answered HTTP ${response.status}`,
        exitCode: null,
        truncated: response.truncated,
        finishedAt: nowIso(),
      };
    },
    (error: Error & { code?: string }): BridgeRun => {
      const status = controller.signal.aborted
        ? "cancelled"
        : error.code === "timeout"
          ? "timed_out"
          : "failed";
      return { ...run, status, output: null, error: error.message, finishedAt: nowIso() };
    },
  );
  return { pid: null, cancel: () => controller.abort(), done };
}
