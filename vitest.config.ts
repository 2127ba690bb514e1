import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Services the tests start as child processes check their answers against the OpenAPI document too.
    env: { AGENTOS_CHECK_OUTPUTS: "1" },
  },
});
