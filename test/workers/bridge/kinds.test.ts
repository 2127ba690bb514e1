import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { PROCESS_KINDS } from "../../../src/workers/bridge/kinds.ts";

/**
 * Prompts a coding CLI could misread: options of its own, and the names of its subcommands (Claude Code
 * `update`/`mcp`/`config`, Codex `exec` `review`/`resume`/`help`, Cursor `login`/`update`/`mcp`).
 */
const HOSTILE_PROMPTS = [
  "--help",
  "--dangerously-skip-permissions",
  "-",
  "update",
  "mcp",
  "config",
  "review",
  "resume",
  "help",
  "login",
];
const CONTEXT = '{"context":null}';

/** The arguments a parser reads as options or subcommands: those before the first `--`. */
const parsedAsOptions = (args: string[]) => (args.includes("--") ? args.slice(0, args.indexOf("--")) : args);

describe("the prompt on each coding CLI's command line", () => {
  it.each(HOSTILE_PROMPTS)("claude_code: %j goes on stdin, never on the command line", (prompt) => {
    const kind = PROCESS_KINDS.claude_code;
    expect(kind.args(prompt, ["--model", "m"])).toEqual(["--model", "m", "-p", "--output-format", "json"]);
    expect(kind.stdin?.(prompt, CONTEXT)).toBe(`${prompt}\n\n${CONTEXT}`);
  });

  it.each(HOSTILE_PROMPTS)("codex: %j is the one argument after --", (prompt) => {
    const args = PROCESS_KINDS.codex.args(prompt, ["--model", "m"]);
    expect(args).toEqual(["exec", "--model", "m", "--json", "--", prompt]);
    expect(parsedAsOptions(args)).not.toContain(prompt);
  });

  it.each(HOSTILE_PROMPTS)("cursor: %j is the one argument after --, never a command's name", (prompt) => {
    const args = PROCESS_KINDS.cursor.args(prompt, ["--model", "m"]);
    expect(args).toEqual(["--model", "m", "-p", "--output-format", "json", "--", `${prompt}\n`]);
    expect(parsedAsOptions(args)).not.toContain(prompt);
  });

  it.each(HOSTILE_PROMPTS)("opencode: %j is the one argument after --", (prompt) => {
    const args = PROCESS_KINDS.opencode.args(prompt, ["--model", "m"]);
    expect(args).toEqual(["run", "--model", "m", "--format", "json", "--", prompt]);
    expect(parsedAsOptions(args)).not.toContain(prompt);
  });

  it("gives the context alone on stdin to the kinds that take the prompt as an argument", () => {
    for (const kind of ["process", "codex", "cursor", "opencode"] as const) {
      expect(PROCESS_KINDS[kind].stdin).toBeUndefined();
    }
  });
});

/**
 * Claude Code and Cursor parse their command lines with Commander (`Usage: … [options] [command]
 * [prompt]`), which dispatches a subcommand named by the first operand even after `--`. A program of
 * the same shape, with the real parser, reads what each kind passes.
 */
function commanderCli(argv: string[]): { subcommand?: string; prompt?: string; help?: boolean } {
  const seen: { subcommand?: string; prompt?: string; help?: boolean } = {};
  const program = new Command("tool")
    .exitOverride()
    .configureOutput({ writeOut: () => (seen.help = true), writeErr: () => undefined })
    .argument("[prompt...]")
    .option("-p, --print")
    .option("--output-format <format>")
    .option("--dangerously-skip-permissions")
    .action((prompt: string[]) => {
      seen.prompt = prompt.join(" ");
    });
  for (const name of ["update", "mcp", "config", "login", "resume"]) {
    program.command(name).action(() => {
      seen.subcommand = name;
    });
  }
  try {
    program.parse(argv, { from: "user" });
  } catch {
    // exitOverride: --help throws once it has printed
  }
  return seen;
}

describe("what a Commander parser makes of each kind's command line", () => {
  it.each(["--help", "--dangerously-skip-permissions", "update", "mcp", "login"])(
    "cursor: %j reaches the action as the prompt",
    (prompt) => {
      const seen = commanderCli(PROCESS_KINDS.cursor.args(prompt, []));
      expect(seen).toEqual({ prompt: `${prompt}\n` });
    },
  );

  it.each(["--help", "update", "mcp", "config"])(
    "claude_code: %j leaves a command line with no operand",
    (prompt) => {
      expect(commanderCli(PROCESS_KINDS.claude_code.args(prompt, []))).toEqual({ prompt: "" });
    },
  );
});
