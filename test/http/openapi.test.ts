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
    expect(operation.responses["402"].content["application/json"].schema.properties.error.type).toBe(
      "object",
    );

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
});
