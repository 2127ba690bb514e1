import { exceedsDepth } from "../../shared/json-depth.ts";

/** What one worker connection may use, so a misbehaving worker cannot exhaust the engine. */
export interface IiiLimits {
  /** Largest inbound frame; a bigger one closes the connection (1009), as no frame can be skipped. */
  maxFrameBytes: number;
  maxFunctionsPerWorker: number;
  maxTriggersPerWorker: number;
  maxTriggerTypesPerWorker: number;
  /**
   * Largest JSON a registration leaves held for the worker's lifetime (a function's metadata, a
   * trigger's config and metadata): without it, each of a worker's functions and triggers could hold a
   * whole frame.
   */
  maxRegistrationChars: number;
  /** Calls a worker may have running at once; more are refused with `too_many_invocations`. */
  maxInFlightPerWorker: number;
  /** Calls waiting on one worker's answers; more are refused (503) rather than queued without end. */
  maxPendingPerWorker: number;
  /** Outbound bytes queued for a worker that does not read; beyond this it is disconnected. */
  maxBufferedBytes: number;
  maxConnections: number;
  /** The SDK's telemetry sockets (`/otel`), counted apart from workers. */
  maxTelemetrySockets: number;
  /** Longest a worker's call may run in the engine; the SDK's own caller gives up after 30 s by default. */
  workerCallTimeoutMs: number;
  /** The engine pings every worker this often... */
  pingIntervalMs: number;
  /** ...and drops one from which nothing (frame, ping or pong) arrived for this long. */
  idleTimeoutMs: number;
}

export const defaultIiiLimits: IiiLimits = {
  maxFrameBytes: 8 * 1024 * 1024,
  maxFunctionsPerWorker: 1000,
  maxTriggersPerWorker: 1000,
  maxTriggerTypesPerWorker: 100,
  maxRegistrationChars: 256 * 1024,
  maxInFlightPerWorker: 1024,
  maxPendingPerWorker: 10_000,
  maxBufferedBytes: 64 * 1024 * 1024,
  maxConnections: 1000,
  maxTelemetrySockets: 256,
  workerCallTimeoutMs: 120_000,
  pingIntervalMs: 20_000,
  idleTimeoutMs: 60_000,
};

/** As for HTTP bodies: JSON.parse takes nesting that JSON.stringify cannot give back, failing every listing. */
const MAX_REGISTRATION_DEPTH = 64;

/** Why a registration's held part (`what`) is too large or too deep, or undefined when it fits. */
export function oversized(what: string, value: unknown, limits: IiiLimits): string | undefined {
  if (exceedsDepth(value, MAX_REGISTRATION_DEPTH)) {
    return `${what} is nested deeper than ${MAX_REGISTRATION_DEPTH} levels`;
  }
  const length = value === undefined ? 0 : JSON.stringify(value).length;
  if (length <= limits.maxRegistrationChars) return undefined;
  return `${what} is ${length} characters of JSON, more than the limit of ${limits.maxRegistrationChars}`;
}
