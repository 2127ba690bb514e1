import { defineConfig } from "vitest/config";

/**
 * Test files that keep process-wide state of libraries they drive (the iii-sdk's worker registry,
 * the cluster nodes' PostgreSQL listeners), each in a fresh process.
 */
const ISOLATED = ["test/engine/iii/**/*.test.ts", "test/cluster/**/*.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two at a time even on two cores: most files spend their time waiting (servers, child processes,
    // timers), and one at a time (Vitest's default here: cores - 1) left the machine half idle.
    maxWorkers: 2,
    // Services the tests start as child processes check their answers against the OpenAPI document too.
    env: { AGENTOS_CHECK_OUTPUTS: "1" },
    projects: [
      {
        extends: true,
        // A fork runs file after file with the modules it already imported: importing the service
        // (2–5 s a file on this machine) was half of the suite's time. Every service a test starts
        // keeps its state in its own data directory, so files do not see each other's.
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: ISOLATED, isolate: false },
      },
      { extends: true, test: { name: "isolated", include: ISOLATED } },
    ],
  },
});
