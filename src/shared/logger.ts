import pino from "pino";

export type Logger = pino.Logger;

export function createLogger(level = process.env.AGENTOS_LOG_LEVEL ?? "info"): Logger {
  return pino({ level, base: { service: "agentos" } });
}

/** A logger that writes nothing, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
