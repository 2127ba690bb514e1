#!/usr/bin/env node
// Runs the CLI on the project's pinned Node 24 (the `node` devDependency), whatever `node` is on PATH.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const pinned = `${root}node_modules/node/bin/node`;
const runtime = existsSync(pinned) ? pinned : process.execPath;
const child = spawn(runtime, [`${root}src/cli/main.ts`, ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
