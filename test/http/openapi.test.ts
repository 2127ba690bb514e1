import { describe, expect, it } from "vitest";
import {
  chatCompletionResponse,
  modelListResponse,
  modelResponse,
} from "../../src/workers/chat-completions/schema.ts";
import { serverWithFakeModel } from "../helpers/fake-openai.ts";
import { json } from "../helpers/server.ts";

const env = serverWithFakeModel();

describe("GET /api/openapi.json", () => {
  it("tags every operation with its domain and lists the tags", async () => {
    const document = await json(await env.server.request("/api/openapi.json"));
    const tags = document.tags.map((tag: { name: string }) => tag.name);
    expect(tags).toEqual(expect.arrayContaining(["agent", "workflow", "realm", "openai", "ledger"]));
    expect([...tags].sort()).toEqual(tags);
    expect(document.paths["/api/agents/{id}"].get.tags).toEqual(["agent"]);
    for (const methods of Object.values(document.paths) as Array<Record<string, { tags?: string[] }>>) {
      for (const operation of Object.values(methods)) expect(tags).toContain(operation.tags?.[0]);
    }
  });

  it("documents /v1/chat/completions' request and answer, and the answer the service gives matches it", async () => {
    const document = await json(await env.server.request("/api/openapi.json"));
    const operation = document.paths["/v1/chat/completions"].post;
    const request = operation.requestBody.content["application/json"].schema;
    expect(request.required).toEqual(expect.arrayContaining(["model", "messages"]));
    expect(request.properties.stream).toBeDefined();
    const answer = operation.responses["200"].content["application/json"].schema;
    expect(answer.required).toEqual(expect.arrayContaining(["id", "choices", "usage"]));
    expect(operation.responses["402"].$ref).toBe("#/components/responses/OpenAiError");
    expect(
      document.components.responses.OpenAiError.content["application/json"].schema.properties.error.type,
    ).toBe("object");

    const response = await env.server.request("/v1/chat/completions", {
      method: "POST",
      json: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
    });
    expect(chatCompletionResponse.safeParse(await json(response)).success).toBe(true);
    const models = await json(await env.server.request("/v1/models"));
    expect(modelListResponse.safeParse(models).success).toBe(true);
    expect(modelResponse.safeParse(await json(await env.server.request("/v1/models/gpt-4o"))).success).toBe(
      true,
    );
    expect(document.paths["/v1/models/{model}"].get.responses["200"].content).toBeDefined();
  });

  it("documents every operation's success: its JSON schema, 204 for no content, or a stream of events", async () => {
    const document = await json(await env.server.request("/api/openapi.json"));
    const undocumented: string[] = [];
    for (const [path, methods] of Object.entries(document.paths) as Array<
      [string, Record<string, Operation>]
    >) {
      // Webhooks answer the platforms that call them, each in its own way.
      if (path.startsWith("/webhook/")) continue;
      for (const [method, operation] of Object.entries(methods)) {
        const successes = Object.entries(operation.responses).filter(([status]) => status.startsWith("2"));
        const described = successes.every(([status, response]) => status === "204" || response.content);
        if (successes.length === 0 || !described) undocumented.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(undocumented).toEqual([]);
    // Every reference resolves inside the document (recursive schemas live in components).
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const [, , kind, name] = ref.split("/");
      expect(ref).toMatch(/^#\/components\/(schemas|responses)\//);
      expect(document.components[kind as string][name as string], ref).toBeDefined();
    }
    const agent = document.paths["/api/agents/{id}"].get.responses["200"].content["application/json"].schema;
    expect(agent.required).toEqual(
      expect.arrayContaining(["id", "name", "model", "realmId", "resolvedTools"]),
    );
    expect(Object.keys(document.paths["/api/agents/{id}"].delete.responses).filter((s) => s < "300")).toEqual(
      ["204"],
    );
    // A bare-array list route documents the array, not the function's {models, nextCursor}.
    expect(document.paths["/api/models"].get.responses["200"].content["application/json"].schema.type).toBe(
      "array",
    );
    const message = document.paths["/api/agents/{id}/message"].post.responses["200"].content;
    expect(Object.keys(message)).toEqual(["application/json", "text/event-stream"]);
  });
});

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
}
