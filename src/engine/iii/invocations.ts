import { randomUUID } from "node:crypto";
import { AppError } from "../../shared/errors.ts";
import { isJsonObject } from "../../shared/json-object.ts";
import type { Logger } from "../../shared/logger.ts";
import type { Engine } from "../engine.ts";
import { systemPrincipal, type TriggerRequest } from "../types.ts";
import { callFromWorker } from "./compat.ts";
import type { WorkerConnection, WorkerMetadata } from "./connection.ts";
import { toErrorBody } from "./errors.ts";
import type { IiiLimits } from "./limits.ts";
import type { InboundFrame } from "./protocol.ts";

type InvokeFrame = Extract<InboundFrame, { type: "invokefunction" }>;

export const REGISTER_WORKER = "engine::workers::register";
const ENQUEUE = "engine::queue::enqueue";

export interface InvocationDeps {
  engine: Engine;
  logger: Logger;
  limits: IiiLimits;
  /** engine::workers::register is about the calling connection, so the hub answers it itself. */
  registerWorker(conn: WorkerConnection, metadata: WorkerMetadata): Promise<unknown>;
}

/**
 * A call from a worker: to a built-in, an in-process function or another worker's function. A worker
 * connection is a trusted part of the deployment (it passed the engine token), so its calls run as
 * the system. At most `maxInFlightPerWorker` run at once per worker; more are refused, not queued.
 */
export function handleInvoke(deps: InvocationDeps, conn: WorkerConnection, frame: InvokeFrame): void {
  const { invocation_id: invocationId, function_id: functionId } = frame;
  // iii: a void call carries no id; the SDK never expects an answer to it.
  const reply = frame.action?.type === "void" ? undefined : invocationId;
  if (conn.inbound >= deps.limits.maxInFlightPerWorker) {
    refuseFlood(deps, conn, functionId, reply);
    return;
  }
  conn.inbound++;
  start(deps, conn, frame).then(
    (result) => {
      conn.inbound--;
      answer(conn, reply, functionId, result);
    },
    (error) => {
      conn.inbound--;
      if (reply === undefined) {
        deps.logger.warn(
          { err: error, functionId, worker: conn.name },
          "fire-and-forget call from worker failed",
        );
        return;
      }
      sendError(conn, reply, functionId, error);
    },
  );
}

/** What the call does: describe the worker, enqueue, or run the function (bounded in time). */
function start(deps: InvocationDeps, conn: WorkerConnection, frame: InvokeFrame): Promise<unknown> {
  if (frame.function_id === REGISTER_WORKER) {
    return deps.registerWorker(conn, workerMetadata(frame.data)).then(() => ({ success: true }));
  }
  if (frame.action?.type === "enqueue") return enqueue(deps, frame, frame.action.queue);
  return run(deps, {
    function_id: frame.function_id,
    payload: frame.data,
    metadata: frame.metadata,
    auth: systemPrincipal,
    // The SDK never says how long its caller waits; this bounds what a silent callee can hold.
    timeout_ms: deps.limits.workerCallTimeoutMs,
  });
}

function sendError(conn: WorkerConnection, reply: string, functionId: string, error: unknown): void {
  conn.send({
    type: "invocationresult",
    invocation_id: reply,
    function_id: functionId,
    error: toErrorBody(error),
  });
}

function run(deps: InvocationDeps, request: TriggerRequest): Promise<unknown> {
  return callFromWorker((call) => deps.engine.trigger(call), request);
}

/**
 * TriggerAction.Enqueue: handed to the queue provider function `engine::queue::enqueue` when a worker
 * provides one (as iii's queue worker does); without one the caller is told so (`enqueue_error`).
 */
async function enqueue(deps: InvocationDeps, frame: InvokeFrame, queue: string): Promise<unknown> {
  if (!deps.engine.functions.get(ENQUEUE)) {
    throw new AppError(
      "unavailable",
      `No queue provider is installed: a worker must register ${ENQUEUE} to accept enqueued calls`,
      { reason: "enqueue_error" },
    );
  }
  const messageReceiptId = randomUUID();
  try {
    await deps.engine.trigger({
      function_id: ENQUEUE,
      payload: { queue, function_id: frame.function_id, data: frame.data, messageReceiptId },
      auth: systemPrincipal,
    });
  } catch (error) {
    throw new AppError("unavailable", `Enqueue to ${queue} failed: ${(error as Error).message}`, {
      reason: "enqueue_error",
    });
  }
  return { messageReceiptId };
}

/**
 * Sends the result unless the call was fire-and-forget. A null result is sent as no result: iii
 * delivers a worker's null as absent, so callers see `undefined` either way (state::get of a missing key).
 */
function answer(
  conn: WorkerConnection,
  reply: string | undefined,
  functionId: string,
  result: unknown,
): void {
  if (reply === undefined) return;
  const frame: Record<string, unknown> = {
    type: "invocationresult",
    invocation_id: reply,
    function_id: functionId,
  };
  if (result !== undefined && result !== null) frame.result = result;
  try {
    conn.send(frame);
  } catch (error) {
    // A result that is not JSON (from an in-process function) still gets the caller an answer.
    sendError(conn, reply, functionId, error);
  }
}

function refuseFlood(deps: InvocationDeps, conn: WorkerConnection, functionId: string, reply?: string): void {
  const message = `Worker ${conn.name} has ${conn.inbound} calls running (the limit is ${deps.limits.maxInFlightPerWorker}); wait for some to finish`;
  if (conn.firstTime("flood")) deps.logger.warn({ worker: conn.name, functionId }, message);
  if (reply === undefined) return;
  conn.send({
    type: "invocationresult",
    invocation_id: reply,
    function_id: functionId,
    error: { code: "too_many_invocations", message },
  });
}

function workerMetadata(data: unknown): WorkerMetadata {
  if (!isJsonObject(data)) return {};
  const text = (value: unknown, max = 256) => (typeof value === "string" ? value.slice(0, max) : undefined);
  return {
    name: text(data.name),
    description: text(data.description, 1024),
    runtime: text(data.runtime),
    version: text(data.version),
    os: text(data.os),
    pid: typeof data.pid === "number" && Number.isInteger(data.pid) ? data.pid : undefined,
    isolation: text(data.isolation) ?? null,
  };
}
