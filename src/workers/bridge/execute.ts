import { nowIso } from "../../shared/clock.ts";
import { guardedRequest, type NetworkPolicy } from "../../shared/net/guarded-request.ts";
import { type Finished, MAX_STDOUT_BYTES, supervise } from "../../shared/process/supervise.ts";
import { PROCESS_KINDS } from "./kinds.ts";
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
  if (runtime.kind === "http") return postTo(runtime, run, context, policy);
  const kind = PROCESS_KINDS[runtime.kind];
  const supervised = supervise({
    command: runtime.command ?? (kind.executable as string),
    args: kind.args(input.prompt ?? "", runtime.args ?? []),
    env: { ...runtime.env, AGENTOS_CONTEXT: context },
    cwd: runtime.workDir,
    stdin: context,
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
    policy,
  }).then(
    (response): BridgeRun => {
      const text = response.body.toString("utf8");
      let output: unknown = text;
      try {
        output = JSON.parse(text);
      } catch {
        // Not JSON: kept as text.
      }
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
