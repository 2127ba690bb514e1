/** What one worker connection may use, so a misbehaving worker cannot exhaust the engine. */
export interface IiiLimits {
  /** Largest inbound frame; a bigger one closes the connection (1009), as no frame can be skipped. */
  maxFrameBytes: number;
  maxFunctionsPerWorker: number;
  maxTriggersPerWorker: number;
  maxTriggerTypesPerWorker: number;
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
  maxInFlightPerWorker: 1024,
  maxPendingPerWorker: 10_000,
  maxBufferedBytes: 64 * 1024 * 1024,
  maxConnections: 1000,
  maxTelemetrySockets: 256,
  workerCallTimeoutMs: 120_000,
  pingIntervalMs: 20_000,
  idleTimeoutMs: 60_000,
};
