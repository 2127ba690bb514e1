import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workspaceDir } from "../../../src/workers/tools/sandbox.ts";
import { toolsServer } from "./setup.ts";

/*
 * The service sends a language server the text of the file asked about and, without a project file, of
 * up to 300 others of the workspace. A hostile workspace's own server (its TypeScript 7+) answers
 * `initialize`, then reads nothing more: whatever the service sends piles up in its memory. Files of
 * control characters grow six times as JSON (\u0001), so a workspace within its quota could hold
 * gigabytes of the service's memory with one call (and more with several at once).
 */
const env = toolsServer();

/** A server that answers `initialize` and `shutdown`-less: after its first answer it never reads again. */
const DEAF_SERVER = `#!/usr/bin/python3
import sys, json, time
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
def read():
    length = 0
    while True:
        line = stdin.readline().strip()
        if not line: break
        if line.lower().startswith(b"content-length:"): length = int(line.split(b":")[1])
    return json.loads(stdin.read(length))
def answer(id, result):
    body = json.dumps({"jsonrpc": "2.0", "id": id, "result": result}).encode()
    stdout.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body); stdout.flush()
message = read()
answer(message["id"], {"capabilities": {"documentSymbolProvider": True}})
time.sleep(600)
`;

/** A server that answers every request (with no symbols) and reads everything it is sent. */
const LISTENING_SERVER = `#!/usr/bin/python3
import sys, json
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
while True:
    length = 0
    while True:
        line = stdin.readline()
        if not line: sys.exit(0)
        line = line.strip()
        if not line: break
        if line.lower().startswith(b"content-length:"): length = int(line.split(b":")[1])
    message = json.loads(stdin.read(length))
    if "id" in message and "method" in message:
        result = {"capabilities": {"documentSymbolProvider": True}} if message["method"] == "initialize" else []
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        stdout.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body); stdout.flush()
`;

function plant(agentId: string, server: string, files: Record<string, Buffer>): void {
  const root = workspaceDir(env.server.dataDir, agentId);
  const dir = join(root, "node_modules", "typescript");
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "typescript", version: "7.0.0" }));
  writeFileSync(join(dir, "bin", "tsc"), server);
  chmodSync(join(dir, "bin", "tsc"), 0o755);
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(root, name), bytes);
}

const MiB = 1024 * 1024;

describe("what the service sends a language server", () => {
  it("stops a server that does not read what it is sent, rather than holding it in memory", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "a.ts", content: "export const a = 1;\n" });
    // 48 sources of 1 MiB of control characters: 288 MiB as JSON, none of it read.
    const files: Record<string, Buffer> = {};
    for (let index = 0; index < 48; index++) files[`f${index}.ts`] = Buffer.alloc(MiB, 1);
    plant(agentId, DEAF_SERVER, files);
    const failure = await env.failure("tool::lsp_symbols", { path: "a.ts" });
    expect(failure.message).toMatch(/^language server does not read what it is sent/);
    expect(failure.status).toBe(422);
  });

  it("refuses a file too large to send, naming the limit", async () => {
    const { agentId } = await env.agent();
    plant(agentId, LISTENING_SERVER, { "big.ts": Buffer.alloc(9 * MiB, 0x61) });
    const failure = await env.failure("tool::lsp_symbols", { path: "big.ts" });
    expect(failure.message).toMatch(/big\.ts is larger than \d+ bytes/);
    expect(failure.status).toBe(400);
  });

  it("still opens the workspace's other sources, leaving out those too large to send", async () => {
    const { agentId } = await env.agent();
    plant(agentId, LISTENING_SERVER, {
      "a.ts": Buffer.from("export const a = 1;\n"),
      "b.ts": Buffer.from("export const b = 2;\n"),
      "huge.ts": Buffer.alloc(9 * MiB, 0x61),
    });
    const { symbols } = await env.tool<{ symbols: unknown[] }>("tool::lsp_symbols", { path: "a.ts" });
    expect(symbols).toEqual([]);
  });
});
