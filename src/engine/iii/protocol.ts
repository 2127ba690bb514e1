/**
 * The iii worker protocol's frames (reference/iii-protocol.md §2), as iii-sdk@0.22.1 speaks them.
 * Inbound frames are read leniently: unknown fields are ignored (the SDK leaks `message_type`), and
 * a frame missing a field it needs is refused on its own, never the connection.
 */

export interface ErrorBody {
  code: string;
  message: string;
  stacktrace?: string;
}

export type InboundFrame =
  | { type: "reattach"; previous_worker_id: string; reattach_token: string }
  | {
      type: "registerfunction";
      id: string;
      description?: string;
      metadata?: Record<string, unknown>;
      request_format?: unknown;
      response_format?: unknown;
      invocation?: unknown;
    }
  | { type: "unregisterfunction"; id: string }
  | { type: "registertriggertype"; id: string; description: string }
  | { type: "unregistertriggertype"; id: string }
  | {
      type: "registertrigger";
      id: string;
      trigger_type: string;
      function_id: string;
      config: unknown;
      metadata?: Record<string, unknown>;
    }
  | { type: "unregistertrigger"; id: string }
  | { type: "triggerregistrationresult"; id: string; trigger_type?: string; error?: ErrorBody }
  | {
      type: "invokefunction";
      invocation_id?: string;
      function_id: string;
      data?: unknown;
      metadata?: Record<string, unknown>;
      action?: { type: "void" } | { type: "enqueue"; queue: string };
      traceparent?: string;
      baggage?: string;
    }
  | { type: "invocationresult"; invocation_id: string; result?: unknown; error?: unknown }
  | { type: "ping" }
  | { type: "pong" }
  | { type: "registerservice" };

export type FrameType = InboundFrame["type"];

/** Why a frame was refused: the text of a log line, and of an error reply where one is possible. */
export class FrameError extends Error {
  /** The invocation the frame belonged to, so the caller can be answered instead of left waiting. */
  readonly invocationId?: string;
  readonly functionId?: string;
  constructor(message: string, invocationId?: string, functionId?: string) {
    super(message);
    this.invocationId = invocationId;
    this.functionId = functionId;
  }
}

type Raw = Record<string, unknown>;

function text(raw: Raw, field: string, max = 1024): string {
  const value = raw[field];
  if (typeof value !== "string" || value.length === 0) {
    throw new FrameError(`${raw.type} frame: "${field}" must be a non-empty string`);
  }
  if (value.length > max)
    throw new FrameError(`${raw.type} frame: "${field}" is longer than ${max} characters`);
  return value;
}

function optionalText(raw: Raw, field: string, max = 4096): string | undefined {
  const value = raw[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new FrameError(`${raw.type} frame: "${field}" must be a string`);
  return value.slice(0, max);
}

function optionalObject(raw: Raw, field: string): Record<string, unknown> | undefined {
  const value = raw[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new FrameError(`${raw.type} frame: "${field}" must be an object`);
  }
  return value as Record<string, unknown>;
}

function action(raw: Raw): { type: "void" } | { type: "enqueue"; queue: string } | undefined {
  const value = raw.action as Raw | undefined | null;
  if (value === undefined || value === null) return undefined;
  if (value.type === "void") return { type: "void" };
  if (value.type === "enqueue" && typeof value.queue === "string" && value.queue.length > 0) {
    return { type: "enqueue", queue: value.queue };
  }
  throw new FrameError('invokefunction frame: "action" must be {type:"void"} or {type:"enqueue", queue}');
}

/** Returns the frame, null for frames to ignore (unknown types, blank text), or throws FrameError. */
export function parseFrame(data: string): InboundFrame | null {
  // Only a frame that starts with whitespace can be blank; trimming every frame would copy it.
  if (data.length === 0 || (data.charCodeAt(0) <= 32 && data.trim() === "")) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    throw new FrameError("frame is not valid JSON");
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new FrameError("frame must be a JSON object with a type");
  }
  return readFrame(raw as Raw);
}

function readFrame(raw: Raw): InboundFrame | null {
  switch (raw.type) {
    case "invokefunction": {
      const invocationId = typeof raw.invocation_id === "string" ? raw.invocation_id : undefined;
      const functionId = typeof raw.function_id === "string" ? raw.function_id : undefined;
      try {
        return {
          type: "invokefunction",
          invocation_id: optionalText(raw, "invocation_id", 128),
          function_id: text(raw, "function_id", 256),
          data: raw.data,
          metadata: optionalObject(raw, "metadata"),
          action: action(raw),
          traceparent: optionalText(raw, "traceparent"),
          baggage: optionalText(raw, "baggage"),
        };
      } catch (error) {
        throw new FrameError((error as Error).message, invocationId, functionId);
      }
    }
    case "invocationresult":
      return {
        type: "invocationresult",
        invocation_id: text(raw, "invocation_id", 128),
        result: raw.result,
        error: raw.error,
      };
    case "registerfunction":
      return {
        type: "registerfunction",
        id: text(raw, "id", 256),
        description: optionalText(raw, "description"),
        metadata: optionalObject(raw, "metadata"),
        request_format: raw.request_format,
        response_format: raw.response_format,
        invocation: raw.invocation,
      };
    case "unregisterfunction":
      return { type: "unregisterfunction", id: text(raw, "id", 256) };
    case "registertriggertype":
      return {
        type: "registertriggertype",
        id: text(raw, "id", 256),
        description: optionalText(raw, "description") ?? "",
      };
    case "unregistertriggertype":
      return { type: "unregistertriggertype", id: text(raw, "id", 256) };
    case "registertrigger":
      return {
        type: "registertrigger",
        id: text(raw, "id", 256),
        trigger_type: text(raw, "trigger_type", 256),
        function_id: text(raw, "function_id", 256),
        config: raw.config ?? {},
        metadata: optionalObject(raw, "metadata"),
      };
    case "unregistertrigger":
      return { type: "unregistertrigger", id: text(raw, "id", 256) };
    case "triggerregistrationresult":
      return {
        type: "triggerregistrationresult",
        id: text(raw, "id", 256),
        trigger_type: optionalText(raw, "trigger_type", 256),
        error: isErrorBody(raw.error) ? raw.error : undefined,
      };
    case "reattach":
      return {
        type: "reattach",
        previous_worker_id: typeof raw.previous_worker_id === "string" ? raw.previous_worker_id : "",
        reattach_token: typeof raw.reattach_token === "string" ? raw.reattach_token : "",
      };
    case "ping":
      return { type: "ping" };
    case "pong":
      return { type: "pong" };
    case "registerservice":
      return { type: "registerservice" };
    default:
      return null;
  }
}

export function isErrorBody(value: unknown): value is ErrorBody {
  const body = value as ErrorBody | null | undefined;
  return typeof body?.code === "string" && typeof body.message === "string";
}
