import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/env.ts";

describe("database limits from the environment", () => {
  it("defaults to 20 connections a node and bounded waits", () => {
    const config = loadConfig({});
    expect(config.databasePoolSize).toBe(20);
    expect(config.databaseTimeouts).toEqual({
      connectMs: 30_000,
      statementMs: 30_000,
      idleInTransactionMs: 60_000,
    });
  });

  it("takes each limit, 0 turning a timeout off", () => {
    const config = loadConfig({
      AGENTOS_DATABASE_POOL_SIZE: "8",
      AGENTOS_DATABASE_CONNECT_TIMEOUT_MS: "2000",
      AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS: "0",
      AGENTOS_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "120000",
    });
    expect(config.databasePoolSize).toBe(8);
    expect(config.databaseTimeouts).toEqual({
      connectMs: 2000,
      statementMs: 0,
      idleInTransactionMs: 120_000,
    });
  });

  it("refuses a pool too small for every pool to get a connection, and timeouts out of range", () => {
    expect(() => loadConfig({ AGENTOS_DATABASE_POOL_SIZE: "5" })).toThrow(/AGENTOS_DATABASE_POOL_SIZE/);
    expect(() => loadConfig({ AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS: "50" })).toThrow(
      /AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS/,
    );
    expect(() => loadConfig({ AGENTOS_DATABASE_CONNECT_TIMEOUT_MS: "soon" })).toThrow(ConfigError);
  });
});
