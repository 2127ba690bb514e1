import { z } from "zod";
import { call } from "../../engine/call.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { accountOf } from "../../llm/cost-event.ts";
import { allPages } from "../../shared/pagination.ts";
import { chatCompletion } from "./completions.ts";
import type { CompletionDeps } from "./deps.ts";
import { createEmbeddings, embeddingsRequest, embeddingsResponse } from "./embeddings.ts";
import { chatCompletionRequest, chatCompletionResponse, modelListResponse, modelResponse } from "./schema.ts";

/**
 * The OpenAI-compatible endpoint (DESIGN.md §5): POST /v1/chat/completions and GET /v1/models. `model`
 * names a catalog model or alias (a plain completion) or an agent (`agent:<id>`, its id or its name),
 * whose prompt, tools and memory then apply.
 */
export function registerChatCompletions(worker: WorkerClient, options: { env: NodeJS.ProcessEnv }): void {
  const deps: CompletionDeps = { trigger: worker.trigger.bind(worker), env: options.env };

  worker.registerFunction(
    {
      id: "openai::chat_completions",
      description: "OpenAI-compatible chat completions (streaming included)",
      body: chatCompletionRequest,
      output: chatCompletionResponse,
    },
    (envelope, ctx) => {
      const { body, rawBody } = envelope as { body?: unknown; rawBody?: unknown };
      return chatCompletion(
        deps,
        body,
        accountOf(ctx.auth),
        typeof rawBody === "string" ? rawBody : undefined,
      );
    },
  );

  worker.registerFunction(
    {
      id: "openai::models",
      description: "OpenAI-compatible model list: catalog models and agents",
      input: z.strictObject({}),
      output: modelListResponse,
    },
    async () => {
      const models = await allPages(
        (page) => call(deps.trigger, "catalog::models", page),
        (answer) => answer.models,
      );
      const agents = await allPages(
        (page) => call(deps.trigger, "agent::list", page),
        (answer) => answer.agents,
      );
      return {
        object: "list" as const,
        data: [...models.map(catalogModel), ...agents.map(agentModel)],
      };
    },
  );

  worker.registerTrigger({
    type: "http",
    function_id: "openai::chat_completions",
    config: { api_path: "/v1/chat/completions", http_method: "POST", envelope: true },
  });
  worker.registerFunction(
    {
      id: "openai::model",
      description: "One OpenAI-compatible model: a catalog id or alias, or agent:<id>",
      input: z.strictObject({ model: z.string().min(1).max(512) }),
      output: modelResponse,
    },
    async ({ model }) => {
      if (model.startsWith("agent:")) {
        return agentModel(await call(deps.trigger, "agent::get", { id: model.slice(6) }));
      }
      return catalogModel(await call(deps.trigger, "catalog::resolve", { model }));
    },
  );

  worker.registerFunction(
    {
      id: "openai::embeddings",
      description: "OpenAI-compatible embeddings, passed through to providers that offer them",
      body: embeddingsRequest,
      output: embeddingsResponse,
    },
    (envelope, ctx) => createEmbeddings(deps, (envelope as { body?: unknown }).body, accountOf(ctx.auth)),
  );
  worker.registerTrigger({
    type: "http",
    function_id: "openai::embeddings",
    config: { api_path: "/v1/embeddings", http_method: "POST", envelope: true },
  });

  worker.registerTrigger({
    type: "http",
    function_id: "openai::models",
    config: { api_path: "/v1/models", http_method: "GET" },
  });
  worker.registerTrigger({
    type: "http",
    function_id: "openai::model",
    config: { api_path: "/v1/models/:model", http_method: "GET" },
  });
}

const catalogModel = (model: { id: string; provider: string }) => ({
  id: model.id,
  object: "model" as const,
  created: 0,
  owned_by: model.provider,
});

const agentModel = (agent: { id: string; createdAt: string }) => ({
  id: `agent:${agent.id}`,
  object: "model" as const,
  created: Math.floor(Date.parse(agent.createdAt) / 1000),
  owned_by: "agentos",
});
