import { readFileSync } from "node:fs";
import type {
  OpenAiChatCompletion,
  OpenAiChunk,
  OpenAiErrorBody,
} from "../../../src/llm/openai/api-types.ts";
import type { ChatCompletionRequest } from "../../../src/workers/chat-completions/schema.ts";

/** The wire payloads of src/llm/openai/__fixtures__ (OpenAI's documented examples), read as the tests need them. */
const directory = new URL("../../../src/llm/openai/__fixtures__/", import.meta.url);

const text = (name: string) => readFileSync(new URL(name, directory), "utf8");

export const fixtures = {
  completion: (): OpenAiChatCompletion => JSON.parse(text("chat-completion.json")),
  toolCallCompletion: (): OpenAiChatCompletion => JSON.parse(text("chat-completion-tool-calls.json")),
  request: (): ChatCompletionRequest => JSON.parse(text("chat-completion-request.json")),
  error: (name: "invalid-api-key" | "rate-limit" | "context-length"): OpenAiErrorBody =>
    JSON.parse(text(`error-${name}.json`)),
  errorText: (name: "invalid-api-key" | "rate-limit" | "context-length") => text(`error-${name}.json`),
  /** A streamed answer as the bytes came (server-sent events). */
  streamText: (name: "chat-completion" | "chat-completion-tool-calls") => text(`${name}.chunks.txt`),
  /** A streamed answer's chunks, parsed (the closing [DONE] left out). */
  chunks: (name: "chat-completion" | "chat-completion-tool-calls"): OpenAiChunk[] =>
    text(`${name}.chunks.txt`)
      .split("\n\n")
      .map((event) => event.replace(/^data: /, "").trim())
      .filter((data) => data !== "" && data !== "[DONE]")
      .map((data) => JSON.parse(data)),
};
