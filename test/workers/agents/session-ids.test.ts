import { describe, expect, it } from "vitest";
import { MAX_SESSION_ID_LENGTH } from "../../../src/shared/limits.ts";
import { call, createAgent, createRealm, realmKey } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";

const env = serverWithFakeModel();

describe("session ids a caller names", () => {
  it("too long for the message store are a 400 before the model is called: nothing paid, nothing remembered", async () => {
    const realm = await createRealm(env.server);
    const key = await realmKey(env.server, realm.id);
    const id = await createAgent(env.server, realm.id, { name: "a" });
    for (const sessionId of ["s".repeat(256), "a\u0000b", "\ud800", "s".repeat(MAX_SESSION_ID_LENGTH + 1)]) {
      const refused = await call(
        env.server,
        "POST",
        `/api/agents/${id}/message`,
        { message: "remember zebra", sessionId },
        key,
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/^sessionId: /);
    }
    expect(env.fake.requests).toHaveLength(0);
    const memory = await call(env.server, "GET", `/api/agents/${id}/memory`, undefined, key);
    expect(memory.body.memories).toEqual([]);
    const ledger = await call(env.server, "GET", `/api/ledger/summary/${realm.id}`, undefined, key);
    expect(ledger.body.eventCount ?? 0).toBe(0);
  });

  it("up to the limit, with slashes, dots and colons, are kept as given", async () => {
    const realm = await createRealm(env.server);
    const id = await createAgent(env.server, realm.id, { name: "a" });
    for (const sessionId of ["s".repeat(MAX_SESSION_ID_LENGTH), "../../x", "a/b:c"]) {
      const answered = await call(env.server, "POST", `/api/agents/${id}/message`, {
        message: "hi",
        sessionId,
      });
      expect(answered.status).toBe(200);
      expect(answered.body.sessionId).toBe(sessionId);
      const again = await call(env.server, "POST", `/api/agents/${id}/message`, {
        message: "more",
        sessionId,
      });
      expect(again.status).toBe(200);
    }
    const { sessions } = (await call(env.server, "GET", `/api/agents/${id}/sessions`)).body;
    const long = sessions.find((session: { id: string }) => session.id.length === MAX_SESSION_ID_LENGTH);
    expect(long.messageCount).toBe(4);
    // Read back by its id in the path too (a route parameter is longer than the router's default 100).
    const read = await call(
      env.server,
      "GET",
      `/api/agents/${id}/sessions/${encodeURIComponent("s".repeat(MAX_SESSION_ID_LENGTH))}`,
    );
    expect(read.status).toBe(200);
    expect(read.body.messages).toHaveLength(4);
  });
});
