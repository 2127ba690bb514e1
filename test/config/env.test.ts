import { describe, expect, it } from "vitest";
import { ConfigError, defaultRateLimits, loadConfig } from "../../src/config/env.ts";

describe("configuration from the environment", () => {
  it("uses the documented defaults when nothing is set", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3111, host: "0.0.0.0", enginePort: 49134, trustProxy: false });
    expect(config.rateLimits).toEqual(defaultRateLimits);
    expect(config.dataDir.endsWith("/data")).toBe(true);
  });

  it("treats variables set to nothing as not set", () => {
    const config = loadConfig({ AGENTOS_PORT: "", AGENTOS_API_KEY: "  ", AGENTOS_DATABASE_URL: "" });
    expect(config.port).toBe(3111);
    expect(config.apiKey).toBeUndefined();
    expect(config.databaseUrl).toBeUndefined();
  });

  it("refuses a bad value with a message naming the variable", () => {
    expect(() => loadConfig({ AGENTOS_PORT: "http" })).toThrow(ConfigError);
    expect(() => loadConfig({ AGENTOS_PORT: "70000" })).toThrow(/AGENTOS_PORT/);
    expect(() => loadConfig({ AGENTOS_API_KEY: "short" })).toThrow(/AGENTOS_API_KEY/);
    expect(() => loadConfig({ AGENTOS_RATE_LIMITS: "reads=5" })).toThrow(/AGENTOS_RATE_LIMITS/);
    expect(() => loadConfig({ AGENTOS_EMBEDDING_MODEL: "m".repeat(513) })).toThrow(/AGENTOS_EMBEDDING_MODEL/);
    expect(() => loadConfig({ AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT: "0" })).toThrow(
      /AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT/,
    );
    expect(() => loadConfig({ AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT: "many" })).toThrow(
      /AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT/,
    );
  });

  it("keeps finished runs, swarms and graph history forever unless a retention in days is set", () => {
    const defaults = loadConfig({});
    expect([
      defaults.workflowRunRetentionDays,
      defaults.swarmRetentionDays,
      defaults.kgHistoryRetentionDays,
    ]).toEqual([0, 0, 0]);
    const set = loadConfig({
      AGENTOS_WORKFLOW_RUN_RETENTION_DAYS: "30",
      AGENTOS_SWARM_RETENTION_DAYS: "7",
      AGENTOS_KG_HISTORY_RETENTION_DAYS: "365",
    });
    expect([set.workflowRunRetentionDays, set.swarmRetentionDays, set.kgHistoryRetentionDays]).toEqual([
      30, 7, 365,
    ]);
    for (const name of [
      "AGENTOS_WORKFLOW_RUN_RETENTION_DAYS",
      "AGENTOS_SWARM_RETENTION_DAYS",
      "AGENTOS_KG_HISTORY_RETENTION_DAYS",
    ]) {
      for (const bad of ["-1", "1.5", "7d", "forever", "40000"]) {
        expect(() => loadConfig({ [name]: bad }), `${name}=${bad}`).toThrow(new RegExp(`${name}: must be`));
      }
    }
  });

  it("bounds one sender's turns per chat channel at 60 by default, 0 turning the bound off", () => {
    expect(loadConfig({}).channelSenderTurns).toBe(60);
    expect(loadConfig({ AGENTOS_CHANNEL_SENDER_TURNS: "0" }).channelSenderTurns).toBe(0);
    expect(() => loadConfig({ AGENTOS_CHANNEL_SENDER_TURNS: "-1" })).toThrow(/AGENTOS_CHANNEL_SENDER_TURNS/);
  });

  it("caps each agent's memory entries, with room for the benchmark's million by default", () => {
    expect(loadConfig({}).memoryMaxEntriesPerAgent).toBe(2_000_000);
    expect(loadConfig({ AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT: "500" }).memoryMaxEntriesPerAgent).toBe(500);
  });

  it("refuses a trusted proxy that is no address, range or proxy-addr name, and a database URL that is not PostgreSQL, naming the variable", () => {
    expect(() => loadConfig({ AGENTOS_TRUST_PROXY: "10.0.0.1,not-an-ip" })).toThrow(
      /AGENTOS_TRUST_PROXY entry "not-an-ip"/,
    );
    expect(() => loadConfig({ AGENTOS_TRUST_PROXY: "10.0.0.0/33" })).toThrow(/AGENTOS_TRUST_PROXY/);
    expect(() => loadConfig({ AGENTOS_DATABASE_URL: "http://db.example:5432/agentos" })).toThrow(
      /AGENTOS_DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/,
    );
    expect(loadConfig({ AGENTOS_TRUST_PROXY: "loopback, ::1, fd00::/8" }).trustProxy).toEqual([
      "loopback",
      "::1",
      "fd00::/8",
    ]);
    expect(loadConfig({ AGENTOS_DATABASE_URL: "postgresql://u@db/agentos" }).databaseUrl).toBe(
      "postgresql://u@db/agentos",
    );
  });

  it("reads rate limits per class, or off", () => {
    expect(loadConfig({ AGENTOS_RATE_LIMITS: "off" }).rateLimits).toBe(false);
    expect(loadConfig({ AGENTOS_RATE_LIMITS: "read=5, message=2" }).rateLimits).toEqual({
      ...defaultRateLimits,
      read: 5,
      message: 2,
    });
  });

  it("reads the trusted proxies as a flag, a hop count or a list", () => {
    expect(loadConfig({ AGENTOS_TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(loadConfig({ AGENTOS_TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(loadConfig({ AGENTOS_TRUST_PROXY: "10.0.0.1, 10.0.0.0/8" }).trustProxy).toEqual([
      "10.0.0.1",
      "10.0.0.0/8",
    ]);
  });
});
