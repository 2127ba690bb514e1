import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two at a time even on two cores: most files spend their time waiting (servers, child processes,
    // timers), and one at a time (Vitest's default here: cores - 1) left the machine half idle.
    maxWorkers: 2,
    // Services the tests start as child processes check their answers against the OpenAPI document too.
    env: { AGENTOS_CHECK_OUTPUTS: "1" },
  },
});
