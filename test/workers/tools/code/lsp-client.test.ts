import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NetworkPolicy } from "../../../../src/shared/net/guarded-request.ts";
import { Sandbox } from "../../../../src/shared/process/sandbox/index.ts";
import {
  FramingError,
  LspClient,
  MAX_HEADER_BYTES,
  MAX_MESSAGE_BYTES,
  MessageFramer,
} from "../../../../src/workers/tools/code/lsp-client.ts";

const frame = (body: string | Buffer, extra = "") => {
  const bytes = Buffer.from(body);
  return Buffer.concat([Buffer.from(`${extra}Content-Length: ${bytes.length}\r\n\r\n`), bytes]);
};

/** `data` cut at `cuts` (positions, any order, duplicates allowed). */
function split(data: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (data.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of [...points, data.length]) {
    chunks.push(data.subarray(from, point));
    from = point;
  }
  return chunks;
}

describe("MessageFramer", () => {
  it("gives the bodies of framed messages, whatever the chunking", () => {
    const body = fc.oneof(fc.string({ unit: "grapheme", maxLength: 200 }), fc.constant("a\r\n\r\nb"));
    const header = fc.constantFrom("", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
    fc.assert(
      fc.property(
        fc.array(fc.tuple(body, header), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        (messages, cuts) => {
          const data = Buffer.concat(messages.map(([text, extra]) => frame(text, extra)));
          const framer = new MessageFramer();
          const got = split(data, cuts).flatMap((chunk) => framer.push(chunk).map((b) => b.toString("utf8")));
          expect(got).toEqual(messages.map(([text]) => text));
          expect(framer.buffered).toBe(0);
        },
      ),
    );
  });

  it("skips a header without Content-Length and gives an empty body", () => {
    const framer = new MessageFramer();
    const data = Buffer.concat([Buffer.from("X-Other: 1\r\n\r\n"), frame(""), frame("{}")]);
    expect(framer.push(data).map(String)).toEqual(["", "{}"]);
  });

  it("refuses a declared length over the cap at once, before holding its body", () => {
    const framer = new MessageFramer();
    expect(() => framer.push(Buffer.from("Content-Length: 99999999999\r\n\r\nxxxx"))).toThrow(
      new FramingError(`language server sent a message over ${MAX_MESSAGE_BYTES} bytes`),
    );
    const small = new MessageFramer(1024);
    expect(small.push(frame("y".repeat(1024))).map((b) => b.length)).toEqual([1024]);
    expect(() => small.push(frame("y".repeat(1025)))).toThrow(
      "language server sent a message over 1024 bytes",
    );
  });

  it("refuses a header that never ends, holding no more than the header cap and a chunk", () => {
    const framer = new MessageFramer();
    const chunk = Buffer.alloc(1000, "X");
    let thrown: unknown;
    for (let sent = 0; sent < 1_000_000 && !thrown; sent += chunk.length) {
      try {
        framer.push(chunk);
      } catch (error) {
        thrown = error;
      }
      expect(framer.buffered).toBeLessThanOrEqual(MAX_HEADER_BYTES + 4 + chunk.length);
    }
    expect(thrown).toEqual(new FramingError(`language server sent a header over ${MAX_HEADER_BYTES} bytes`));
    // A header of exactly the cap is still one.
    const header = `Content-Length: 2\r\nX: ${"h".repeat(MAX_HEADER_BYTES - 22)}`;
    expect(Buffer.byteLength(header)).toBe(MAX_HEADER_BYTES);
    expect(new MessageFramer().push(Buffer.from(`${header}\r\n\r\n{}`)).map(String)).toEqual(["{}"]);
  });

  it("holds at most a message while its body streams in", () => {
    const framer = new MessageFramer(64 * 1024);
    framer.push(Buffer.from(`Content-Length: ${64 * 1024}\r\n\r\n`));
    const chunk = Buffer.alloc(1024, "z");
    let bodies = 0;
    for (let index = 0; index < 64; index++) {
      bodies += framer.push(chunk).length;
      expect(framer.buffered).toBeLessThanOrEqual(64 * 1024 + chunk.length);
    }
    expect(bodies).toBe(1);
    expect(framer.buffered).toBe(0);
  });

  it("takes linear time over many small chunks (a body is copied once)", () => {
    const body = Buffer.alloc(2 * 1024 * 1024, "a");
    const data = frame(body);
    const framer = new MessageFramer();
    const started = performance.now();
    const got: Buffer[] = [];
    for (let at = 0; at < data.length; at += 16) got.push(...framer.push(data.subarray(at, at + 16)));
    expect(got).toHaveLength(1);
    expect(got[0]?.equals(body)).toBe(true);
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe("LspClient against a hostile server", () => {
  let dir: string;
  let sandbox: Sandbox;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "lsp-client-"));
    // The sandbox off: the client's side is under test here (the confined path is in lsp-quota.test.ts).
    sandbox = new Sandbox({
      env: { AGENTOS_SANDBOX: "off" },
      dataDir: dir,
      policy: {} as NetworkPolicy,
    });
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function client(program: string) {
    const script = join(dir, `server-${Math.random().toString(36).slice(2)}.js`);
    writeFileSync(script, program);
    const attached = await sandbox.attach({ workspace: dir, executable: process.execPath, args: [script] });
    const uri = pathToFileURL(dir).href;
    return { attached, lsp: new LspClient(attached, { host: uri, server: uri }) };
  }

  it("fails a request and kills the server that declares a message over the cap", async () => {
    const { attached, lsp } = await client(`
      process.stdout.write("Content-Length: 99999999999\\r\\n\\r\\n");
      const chunk = "x".repeat(65536);
      const more = () => { while (process.stdout.write(chunk)); process.stdout.once("drain", more); };
      more();
    `);
    const started = performance.now();
    await expect(lsp.request("initialize", {}, 10_000)).rejects.toThrow(
      `language server sent a message over ${MAX_MESSAGE_BYTES} bytes`,
    );
    expect(performance.now() - started).toBeLessThan(5000);
    const finished = await attached.done;
    expect(finished.signal).toBe("SIGKILL");
    // Later requests fail the same way, without waiting.
    await expect(lsp.request("shutdown", null, 10_000)).rejects.toThrow("over 16777216 bytes");
    await lsp.close();
  });

  it("fails a request and kills the server whose header never ends", async () => {
    const { attached, lsp } = await client(`
      const chunk = "Content-Type: x".repeat(4096);
      const more = () => { while (process.stdout.write(chunk)); process.stdout.once("drain", more); };
      more();
    `);
    await expect(lsp.request("initialize", {}, 10_000)).rejects.toThrow(
      `language server sent a header over ${MAX_HEADER_BYTES} bytes`,
    );
    expect((await attached.done).signal).toBe("SIGKILL");
  });

  it("still answers requests of a well-behaved server, split however it writes them", async () => {
    const { lsp } = await client(`
      let input = Buffer.alloc(0);
      process.stdin.on("data", (chunk) => {
        input = Buffer.concat([input, chunk]);
        for (;;) {
          const end = input.indexOf("\\r\\n\\r\\n");
          if (end < 0) return;
          const length = Number(/Content-Length: (\\d+)/.exec(input.subarray(0, end).toString())[1]);
          if (input.length < end + 4 + length) return;
          const message = JSON.parse(input.subarray(end + 4, end + 4 + length).toString());
          input = input.subarray(end + 4 + length);
          if (message.id === undefined) continue;
          const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { echo: message.params } }));
          const data = Buffer.concat([Buffer.from("Content-Length: " + body.length + "\\r\\n\\r\\n"), body]);
          // One byte at a time for the header, the rest at once.
          for (let at = 0; at < end + 4; at++) process.stdout.write(data.subarray(at, at + 1));
          process.stdout.write(data.subarray(end + 4));
        }
      });
    `);
    expect(await lsp.request("initialize", { a: "é\r\n\r\n" })).toEqual({ echo: { a: "é\r\n\r\n" } });
    expect(await lsp.request("x", [1, 2, 3])).toEqual({ echo: [1, 2, 3] });
    await lsp.close();
  });
});
