import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent } from "../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let agentId: string;

beforeAll(async () => {
  server = await startTestServer();
  agentId = await createAgent(server, "realm-default");
});
afterAll(async () => {
  await server.close();
});

describe("bad input is refused with a 400 naming it, never read as something else", () => {
  it.each([
    ["/api/realms?colour=red", "colour"],
    ["/v1/models?colour=red", "colour"],
    ["/metrics?colour=red", "colour"],
  ])("GET %s refuses the unknown query parameter", async (path, name) => {
    const response = await call(server, "GET", path);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain(name);
  });

  it("refuses a key for a realm that does not exist (404) or whose id holds NUL (400)", async () => {
    const missing = await call(server, "POST", "/api/keys", { realmId: "realm-nope" });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toContain("realm-nope");
    const nul = await call(server, "POST", "/api/keys", { realmId: "realm-\u0000x" });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toContain("realmId");
  });

  it("refuses a message its memories could not store, instead of answering 200 and dropping them", async () => {
    const response = await call(server, "POST", `/api/agents/${agentId}/message`, {
      message: "hi\u0000there",
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toContain("message");
  });

  it.each(["true", "1.5", "", "1e2", "0x10", "-1", "201"])(
    "refuses limit=%s on the memory query",
    async (limit) => {
      const response = await call(server, "POST", `/api/agents/${agentId}/memory?limit=${limit}`, {
        query: "x",
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toContain("limit");
    },
  );

  it("still reads a limit given as digits or as a JSON number", async () => {
    expect((await call(server, "POST", `/api/agents/${agentId}/memory?limit=5`, { query: "x" })).status).toBe(
      200,
    );
    expect(
      (await call(server, "POST", `/api/agents/${agentId}/memory`, { query: "x", limit: 5 })).status,
    ).toBe(200);
  });
});
