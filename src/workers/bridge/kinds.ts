import { exceedsDepth } from "../../shared/json-depth.ts";
import type { RuntimeKind } from "./schema.ts";

/** What a run produced, read from its standard output. */
export interface Parsed {
  output: unknown;
  /** Set when the tool reported a failure in its own output (its exit code may still be 0). */
  error?: string;
}

/**
 * One runtime kind that runs a process: the executable it runs when the runtime names none, its
 * command line (the runtime's own args first), what it reads on stdin, whether it needs a prompt, and
 * how its output reads. Each coding tool runs its documented non-interactive mode with machine-readable
 * output.
 *
 * The prompt is untrusted text, and none of these tools may read it as an option or a subcommand
 * (`mcp`, `update`, `login`, `review`…): each gets it the way its own parser cannot misread.
 */
interface ProcessKind {
  executable?: string;
  needsPrompt: boolean;
  args(prompt: string, extra: string[]): string[];
  /** What the process reads on stdin (default: the context). */
  stdin?(prompt: string, context: string): string;
  parse(stdout: string): Parsed;
}

/**
 * Commander, the parser whose `Usage: … [options] [command] [prompt...]` Cursor (and Claude Code) print,
 * stops reading options at `--` but still dispatches a subcommand named by the first operand after it
 * (`cursor-agent -p -- login` would run `login`), matching the whole argument exactly: ended by a
 * newline, the prompt can never be a command's name, and reads the same to the model.
 */
const notACommandName = (prompt: string) => (prompt.endsWith("\n") ? prompt : `${prompt}\n`);

export const PROCESS_KINDS: Record<Exclude<RuntimeKind, "http">, ProcessKind> = {
  // `command args…`, the context on stdin and in AGENTOS_CONTEXT; JSON output is parsed, text kept.
  process: {
    needsPrompt: false,
    args: (_prompt, extra) => extra,
    parse: (stdout) => ({ output: jsonOrText(stdout) }),
  },
  // Claude Code print mode: `claude -p --output-format json` → one result object. The prompt goes on
  // stdin, the documented input of print mode when no prompt argument is given, followed by the context
  // (the piped content a prompt argument would have had): as an argument, even after `--`, a prompt such
  // as `update` or `mcp` would run that subcommand (see notACommandName).
  claude_code: {
    executable: "claude",
    needsPrompt: true,
    args: (_prompt, extra) => [...extra, "-p", "--output-format", "json"],
    stdin: (prompt, context) => `${prompt}\n\n${context}`,
    parse: parseResultObject,
  },
  // Codex non-interactive: `codex exec --json -- <prompt>` → JSONL thread events. Its parser (clap) reads
  // everything after `--` as the PROMPT positional, never an option or a subcommand (`review`, `resume`,
  // `help`); the context on stdin is appended to the prompt.
  codex: {
    executable: "codex",
    needsPrompt: true,
    args: (prompt, extra) => ["exec", ...extra, "--json", "--", prompt],
    parse: parseCodexEvents,
  },
  // Cursor CLI print mode: `cursor-agent -p --output-format json -- <prompt>` → one result object. Its
  // documented prompt is the positional argument (stdin is not read as one): `--` ends its options, and
  // notACommandName keeps it from naming a subcommand (`login`, `logout`, `update`, `mcp`…).
  cursor: {
    executable: "cursor-agent",
    needsPrompt: true,
    args: (prompt, extra) => [...extra, "-p", "--output-format", "json", "--", notACommandName(prompt)],
    parse: parseResultObject,
  },
  // OpenCode: `opencode run --format json -- <prompt>` → JSONL events (text parts, step_finish tokens).
  // Its parser (yargs, populate--) hands everything after `--` to `run` as the message.
  opencode: {
    executable: "opencode",
    needsPrompt: true,
    args: (prompt, extra) => ["run", ...extra, "--format", "json", "--", prompt],
    parse: parseOpencodeEvents,
  },
};

/**
 * Output nested deeper than this is not read as JSON: the store, and every reader of the run, serialize
 * it recursively, and a runtime printing a few hundred thousand brackets overflowed the stack there and
 * ended the service.
 */
const MAX_OUTPUT_DEPTH = 64;

/** `text` as JSON, or undefined when it is not JSON or nests deeper than MAX_OUTPUT_DEPTH. */
function parseJson(text: string): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return exceedsDepth(value, MAX_OUTPUT_DEPTH) ? undefined : { value };
}

/** Output of a process, or an http runtime's answer: parsed when it is JSON, else the text. */
export function jsonOrText(text: string): unknown {
  const json = parseJson(text.trim());
  return json ? json.value : text;
}

type Json = Record<string, unknown>;

/** Every line that is a JSON object, in order (tools may print other lines around them). */
function jsonLines(stdout: string): Json[] {
  const objects: Json[] = [];
  for (const line of stdout.split("\n")) {
    const trimmed = line.trim();
    // A partial or foreign line is skipped.
    const json = trimmed.startsWith("{") ? parseJson(trimmed) : undefined;
    if (json) objects.push(json.value as Json);
  }
  return objects;
}

const str = (value: unknown) => (typeof value === "string" ? value : undefined);

/** Claude Code and Cursor: `{type: "result", subtype, is_error, result, session_id, usage?, total_cost_usd?}`. */
function parseResultObject(stdout: string): Parsed {
  const result = jsonLines(stdout)
    .reverse()
    .find((object) => object.type === "result");
  if (!result) return { output: stdout, error: "the tool printed no result object" };
  const output = {
    text: str(result.result) ?? "",
    ...(str(result.session_id) ? { sessionId: result.session_id } : {}),
    ...(result.usage ? { usage: result.usage } : {}),
    ...(typeof result.total_cost_usd === "number" ? { costUsd: result.total_cost_usd } : {}),
  };
  if (result.is_error === true || (result.subtype !== undefined && result.subtype !== "success")) {
    return { output, error: str(result.result) || `the tool ended with ${String(result.subtype)}` };
  }
  return { output };
}

/** Codex: the last `item.completed` agent message, `turn.completed` usage; `turn.failed`/`error` fail it. */
function parseCodexEvents(stdout: string): Parsed {
  let text = "";
  let usage: unknown;
  let error: string | undefined;
  for (const event of jsonLines(stdout)) {
    const item = event.item as Json | undefined;
    if (event.type === "item.completed" && item?.type === "agent_message") text = str(item.text) ?? text;
    else if (event.type === "turn.completed") usage = event.usage;
    else if (event.type === "turn.failed" || event.type === "error") {
      error = str((event.error as Json | undefined)?.message) ?? str(event.message) ?? JSON.stringify(event);
    }
  }
  return { output: { text, ...(usage ? { usage } : {}) }, ...(error ? { error } : {}) };
}

/** OpenCode: the text parts of the last step, tokens summed over `step_finish`; `error` events fail it. */
function parseOpencodeEvents(stdout: string): Parsed {
  let text = "";
  const tokens = { input: 0, output: 0 };
  let error: string | undefined;
  for (const event of jsonLines(stdout)) {
    const part = (event.part ?? {}) as Json;
    if (event.type === "step_start") text = "";
    else if (event.type === "text") text += str(part.text) ?? "";
    else if (event.type === "step_finish") {
      const used = (part.tokens ?? {}) as Json;
      tokens.input += typeof used.input === "number" ? used.input : 0;
      tokens.output += typeof used.output === "number" ? used.output : 0;
    } else if (event.type === "error") {
      const detail = event.error as Json | undefined;
      error =
        str((detail?.data as Json | undefined)?.message) ?? str(detail?.message) ?? JSON.stringify(event);
    }
  }
  return { output: { text: text.trim(), usage: tokens }, ...(error ? { error } : {}) };
}
