import { defineConfig } from "vitest/config";
export default defineConfig({ test: { include: ["test/**/*.test.ts"], setupFiles: ["./zz-setup.tmp.ts"], testTimeout: 300_000, pool: "forks" } });
