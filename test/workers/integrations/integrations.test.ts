import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { toolsServer } from "../tools/setup.ts";

const env = toolsServer();
const NOTES_SERVER = join(import.meta.dirname, "../../fixtures/mcp/notes-server.mjs");

function declare(name: string, text: string): void {
  mkdirSync(join(env.server.dataDir, "integrations"), { recursive: true });
  writeFileSync(join(env.server.dataDir, "integrations", `${name}.toml`), text);
}

const notesFile = (extra = "") => `description = "Notes over MCP"
[mcp]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(NOTES_SERVER)}]
env = { NOTES_MODE = "test" }
${extra}`;

/** A direct call, as an admin or as a realm's key. */
function invoke(id: string, payload: Record<string, unknown>, realmId?: string): Promise<unknown> {
  return env.server.service.engine.trigger({
    function_id: id,
    payload,
    auth: realmId ? { kind: "realm", realmId, keyId: "test" } : { kind: "admin", keyId: "test" },
  });
}

async function reload() {
  const { status, body } = await call(env.server, "POST", "/api/config/reload", {});
  expect(status).toBe(200);
  return body;
}

describe("integrations", () => {
  it("connects an MCP server over stdio and lets an agent call its tools in a turn", async () => {
    declare("notes", notesFile());
    const report = await reload();
    expect(report.integrations).toMatchObject({ connected: ["notes"] });
    expect(report.problems).toEqual([]);
    const { body: listed } = await call(env.server, "GET", "/api/integrations");
    expect(listed.integrations).toEqual([
      expect.objectContaining({
        name: "notes",
        status: "connected",
        functions: [
          "mcp::notes::add_note",
          "mcp::notes::list_notes",
          "mcp::notes::read_env",
          "mcp::notes::fail",
        ],
      }),
    ]);

    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { tools: ["mcp::notes::*"] });
    expect((await call(env.server, "GET", `/api/agents/${agentId}`)).body.resolvedTools).toEqual([
      "mcp::notes::add_note",
      "mcp::notes::fail",
      "mcp::notes::list_notes",
      "mcp::notes::read_env",
    ]);
    env.fake.reply(
      { toolCalls: [{ name: "mcp__notes__add_note", arguments: { text: "buy milk" } }] },
      { toolCalls: [{ name: "mcp__notes__list_notes", arguments: {} }] },
      { content: "Noted." },
    );
    const reply = await call(env.server, "POST", `/api/agents/${agentId}/message`, {
      message: "remember milk",
    });
    expect(reply.body.content).toBe("Noted.");
    const lastRequest = JSON.stringify(env.fake.requests.at(-1));
    expect(lastRequest).toContain("kept note 1");
    expect(lastRequest).toContain("buy milk");

    // Called directly: a bad argument is refused with the field named, a tool error is an error.
    await expect(invoke("mcp::notes::add_note", {})).rejects.toThrow(/text/);
    await expect(invoke("mcp::notes::fail", {})).rejects.toThrow(/always fails/);
  });

  it("passes vault secrets to the server, reconnects a changed file and takes a removed one's tools away", async () => {
    await call(env.server, "POST", "/api/vault", { key: "mcp:notes:token", value: "s3cret" });
    declare("notes", notesFile(`secrets = { NOTES_TOKEN = "mcp:notes:token" }\n`));
    expect((await reload()).integrations).toMatchObject({ connected: ["notes"] });
    const read = (await invoke("mcp::notes::read_env", { name: "NOTES_TOKEN" })) as { text: string };
    expect(read.text).toBe("s3cret");
    expect((await reload()).integrations).toMatchObject({ connected: [], unchanged: ["notes"] });

    // The secret is named in the file, never written there.
    declare("missing", notesFile(`secrets = { NOTES_TOKEN = "mcp:nowhere" }\n`));
    declare("broken", `[mcp]\ncommand = "/nonexistent/mcp-server"\n`);
    declare("typo", `[mcp]\ncomand = "x"\n`);
    const mixed = await reload();
    expect(mixed.integrations).toMatchObject({ unchanged: ["notes"] });
    const problems = mixed.problems.map(
      (problem: { file: string; message: string }) => `${problem.file.split("/").at(-1)}: ${problem.message}`,
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^typo.toml: mcp: Unrecognized key: "comand"/),
        expect.stringMatching(/^missing.toml: secrets.NOTES_TOKEN: the vault has no entry mcp:nowhere/),
        expect.stringMatching(/^broken.toml: MCP server \/nonexistent\/mcp-server of broken did not connect/),
      ]),
    );
    for (const name of ["missing", "broken", "typo", "notes"])
      rmSync(join(env.server.dataDir, "integrations", `${name}.toml`));
    expect((await reload()).integrations).toMatchObject({ removed: expect.arrayContaining(["notes"]) });
    await expect(invoke("mcp::notes::list_notes", {})).rejects.toThrow(/not found/);
  });

  it("serves plain HTTP tools, only to the realms the file names", async () => {
    const api = createServer((request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ path: request.url, auth: request.headers["x-api-key"] ?? null }));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    const port = (api.address() as AddressInfo).port;
    try {
      const allowed = await newRealm(env.server);
      const other = await newRealm(env.server);
      declare(
        "weather",
        `realms = ["${allowed}"]
[[http]]
name = "forecast"
description = "The forecast for a city"
url = "http://127.0.0.1:${port}/forecast/{{city}}"
parameters = { city = { type = "string" }, days = { type = "integer" } }
required = ["city"]
headers = { x-api-key = "public-demo" }
`,
      );
      expect((await reload()).integrations).toMatchObject({ connected: ["weather"] });
      const answer = (await invoke("http::weather::forecast", { city: "São Paulo", days: 2 }, allowed)) as {
        body: { path: string; auth: string };
      };
      expect(answer.body).toEqual({ path: "/forecast/S%C3%A3o%20Paulo?days=2", auth: "public-demo" });
      await expect(invoke("http::weather::forecast", { city: "Oslo" }, other)).rejects.toMatchObject({
        status: 403,
        message: expect.stringMatching(/not available to realm/),
      });
      // A realm key lists only what its realm may call: integrations, and functions (whose descriptions
      // and schemas tell another realm's internal URLs).
      const otherKey = await realmKey(env.server, other);
      expect(
        (await call(env.server, "GET", "/api/integrations", undefined, otherKey)).body.integrations,
      ).toEqual([]);
      const listed = async (key: string) =>
        (await call(env.server, "GET", "/api/functions?prefix=http::", undefined, key)).body.functions.map(
          (fn: { id: string }) => fn.id,
        );
      expect(await listed(otherKey)).toEqual([]);
      expect(await listed(await realmKey(env.server, allowed))).toEqual(["http::weather::forecast"]);
      // Nor is it another realm's agent's tool (shown to its model), whatever its patterns say.
      const resolved = async (realmId: string) => {
        const agentId = await createAgent(env.server, realmId, { tools: ["http::*"] });
        return (await call(env.server, "GET", `/api/agents/${agentId}`)).body.resolvedTools;
      };
      expect(await resolved(other)).toEqual([]);
      expect(await resolved(allowed)).toEqual(["http::weather::forecast"]);
      rmSync(join(env.server.dataDir, "integrations", "weather.toml"));
      await reload();
    } finally {
      api.close();
    }
  });

  it("does not run an MCP server's input schema patterns on a caller's arguments (ReDoS)", async () => {
    const mcp = createServer(async (request, response) => {
      if (request.method !== "POST") return void response.writeHead(405).end();
      let body = "";
      for await (const chunk of request) body += chunk;
      const message = JSON.parse(body);
      if (message.id === undefined) return void response.writeHead(202).end();
      const results: Record<string, unknown> = {
        initialize: {
          protocolVersion: message.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "lookup", version: "1" },
        },
        "tools/list": {
          tools: [
            {
              name: "find",
              inputSchema: { type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } } },
            },
          ],
        },
        "tools/call": { content: [{ type: "text", text: "checked by the server" }] },
      };
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: results[message.method] }));
    });
    await new Promise<void>((resolve) => mcp.listen(0, "127.0.0.1", resolve));
    try {
      declare("lookup", `[mcp]\nurl = "http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp"\n`);
      expect((await reload()).integrations).toMatchObject({ connected: ["lookup"] });
      const realmId = await newRealm(env.server);
      // The pattern is not run here (on "a…a!" a catastrophic backtracking one holds the whole service
      // for seconds): an argument it refuses reaches the server, which checks its own patterns.
      await expect(invoke("mcp::lookup::find", { q: "a!" }, realmId)).resolves.toMatchObject({
        text: "checked by the server",
      });
      // The rest of the schema still holds.
      await expect(invoke("mcp::lookup::find", { q: 5 }, realmId)).rejects.toThrow(/q/);
    } finally {
      rmSync(join(env.server.dataDir, "integrations", "lookup.toml"));
      await reload();
      mcp.close();
    }
  });
});
