import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_BROWSER_PATH } from "../../../src/workers/tools/browser/chromium.ts";
import { lineHash } from "../../../src/workers/tools/files/hashline.ts";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { toolsServer } from "./setup.ts";

const env = toolsServer();
const browser = existsSync(process.env.AGENTOS_BROWSER_PATH || DEFAULT_BROWSER_PATH);

/** [tool, arguments the model gives, model calls the tool itself makes]: in this order, one turn each. */
function calls(fakeUrl: string): Array<[string, Record<string, unknown>, number?]> {
  const models = `${fakeUrl}/models`;
  return [
    ["file_write", { path: "a.txt", content: "hello\n" }],
    ["file_read", { path: "a.txt" }],
    ["file_list", {}],
    ["apply_patch", { patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n+world\n" }],
    ["hashline_read", { path: "a.txt" }],
    [
      "hashline_diff",
      { path: "a.txt", edits: [{ line: 1, hash: lineHash("world"), op: "replace", content: "there" }] },
    ],
    [
      "hashline_edit",
      { path: "a.txt", edits: [{ line: 1, hash: lineHash("world"), op: "replace", content: "there" }] },
    ],
    ["shell_exec", { command: "ls" }],
    ["process_list", {}],
    ["disk_usage", {}],
    ["system_info", {}],
    ["network_check", { host: "127.0.0.1", port: Number(new URL(fakeUrl).port) }],
    ["env_get", { name: "TZ" }],
    ["file_write", { path: "src/m.ts", content: "export const one = 1;\n" }],
    ["code_analyze", {}],
    ["code_test", { command: "node", args: ["-e", "0"] }],
    ["code_explain", { code: "let x = 1" }, 1],
    ["lsp_symbols", { path: "src/m.ts" }],
    ["lsp_diagnostics", { path: "src/m.ts" }],
    ["lsp_references", { path: "src/m.ts", symbol: "one" }],
    ["lsp_goto_definition", { path: "src/m.ts", symbol: "one" }],
    ["lsp_rename", { path: "src/m.ts", symbol: "one", newName: "uno" }],
    ["json_transform", { data: { a: [1, 2] }, expression: ".a | add" }],
    ["csv_parse", { text: "a,b\n1,2\n" }],
    ["yaml_parse", { text: "a: 1\n" }],
    ["regex_test", { pattern: "o+", text: "foo" }],
    ["uuid_generate", {}],
    ["hash_compute", { text: "x" }],
    ["sql_build", { operation: "select", table: "t" }],
    ["git_commit", { message: "first", init: true }],
    ["git_status", {}],
    ["git_diff", {}],
    ["git_log", {}],
    ["cron_create", { schedule: "0 0 1 1 *", message: "once a year" }],
    ["cron_list", {}],
    ["schedule_reminder", { message: "later", inSeconds: 3600 }],
    ["todo_create", { title: "a task" }],
    ["todo_list", {}],
    ["memory_store", { content: "the sky is green here", key: "sky" }],
    ["memory_recall", { key: "sky" }],
    ["memory_search", { query: "sky" }],
    ["vector_store", { id: "d1", text: "a document" }],
    ["vector_search", { query: "document" }],
    ["vector_delete", { id: "d1" }],
    ["kg_add", { entity: "acme", type: "company" }],
    ["kg_query", { entity: "acme" }],
    ["kg_visualize", { entity: "acme" }],
    ["agent_list", {}],
    ["snapshot_create", {}],
    ["snapshot_list", {}],
    ["api_call", { url: models }],
    ["web_fetch", { url: models }],
    ["media_download", { url: models, path: "models.json" }],
    ["image_generate_prompt", { description: "a lighthouse" }, 1],
    ["tts_speak", { text: "hello", path: "hello.mp3" }],
    ["audio_transcribe", { path: "hello.mp3" }],
    ["compose", { steps: [{ tool: "tool::uuid_generate", args: {} }] }],
    ...(browser
      ? ([
          ["browser_screenshot", { url: models }],
          ["browser_navigate", { url: models }],
          ["browser_read_page", {}],
          ["browser_action", { action: "wait", timeoutMs: 100 }],
          ["browser_close", {}],
        ] as Array<[string, Record<string, unknown>]>)
      : []),
  ];
}

describe("every tool through an agent's turn", () => {
  it("runs each tool the model calls, in the agent's own workspace, without an error", {
    timeout: 120_000,
  }, async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { toolProfile: "full" });
    const list = calls(env.fake.baseUrl);
    const failures: string[] = [];
    for (const [name, args, modelCalls = 0] of list) {
      env.fake.reply(
        { toolCalls: [{ name: `tool__${name}`, arguments: args }] },
        ...Array.from({ length: modelCalls }, () => ({ content: "the model's own answer" })),
        { content: `${name} done` },
      );
      const reply = await call(env.server, "POST", `/api/agents/${agentId}/message`, {
        message: `use ${name}`,
      });
      expect(reply.body.content, JSON.stringify(reply.body)).toBe(`${name} done`);
      const message = (env.fake.requests.at(-1)?.messages as Array<{ content?: string }> | undefined)?.at(-1);
      const output = JSON.parse(message?.content ?? "null") as { error?: unknown } | null;
      if (typeof output?.error === "string") failures.push(`${name}: ${output.error}`);
    }
    expect(failures).toEqual([]);
    expect(new Set(list.map(([name]) => name)).size).toBeGreaterThan(browser ? 60 : 55);
  });
});
