import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

// A collector as OTLP/HTTP JSON receivers are: POST /v1/traces with resourceSpans.
const spans: ReceivedSpan[] = [];
const services = new Set<string>();
const collector = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    if (req.url === "/v1/traces") {
      const doc = JSON.parse(body) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
          scopeSpans: Array<{ spans: ReceivedSpan[] }>;
        }>;
      };
      for (const resource of doc.resourceSpans) {
        const name = resource.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue;
        if (name) services.add(name);
        for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});

let fake: FakeOpenAI;
let server: TestServer;

beforeAll(async () => {
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  fake = await startFakeOpenAI();
  server = await startTestServer({
    env: {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.baseUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
  });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
  collector.close();
});

const attribute = (span: ReceivedSpan | undefined, key: string) =>
  span?.attributes.find((a) => a.key === key)?.value;

describe("OpenTelemetry traces over OTLP", () => {
  it("trace a turn: HTTP request → agent turn → model calls and the tool call, as parent and children", async () => {
    const id = await createAgent(server, await newRealm(server), { tools: ["tool::hash_compute"] });
    fake.reply(
      { toolCalls: [{ name: "tool__hash_compute", arguments: { text: "abc" } }] },
      { content: "done" },
    );
    expect((await call(server, "POST", `/api/agents/${id}/message`, { message: "hash" })).status).toBe(200);
    const named = (name: string) => spans.filter((span) => span.name === name);
    await expect.poll(() => named("llm.call").length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    await expect.poll(() => named("POST /api/agents/:id/message").length, { timeout: 10_000 }).toBe(1);
    const http = named("POST /api/agents/:id/message")[0] as ReceivedSpan;
    const turn = named("agent.turn").find((span) => span.traceId === http.traceId);
    expect(turn?.parentSpanId).toBe(http.spanId);
    expect(attribute(turn, "agentos.agent.id")).toEqual({ stringValue: id });
    const models = named("llm.call").filter((span) => span.traceId === http.traceId);
    expect(models).toHaveLength(2);
    for (const model of models) {
      expect(model.parentSpanId).toBe(turn?.spanId);
      expect(attribute(model, "gen_ai.request.model")).toEqual({ stringValue: "gpt-4o" });
    }
    const tool = named("tool.call").find((span) => span.traceId === http.traceId);
    expect(attribute(tool, "agentos.tool")).toEqual({ stringValue: "tool::hash_compute" });
    expect(tool?.parentSpanId).toBe(turn?.spanId);
    expect(attribute(http, "http.response.status_code")).toEqual({ intValue: 200 });
    expect(services).toEqual(new Set(["agentos"]));
  });
});
