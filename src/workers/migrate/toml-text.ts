import { stringify as toToml } from "smol-toml";

const isLong = (key: string, value: unknown, multiline: string[]) =>
  multiline.includes(key) && typeof value === "string" && value.includes("\n");

/** A TOML multi-line basic string's body: backslashes, a run of three quotes and control characters escaped. */
function multilineBody(value: string): string {
  let body = "";
  for (const char of value.replace(/\\/g, "\\\\").replace(/"""/g, '""\\"')) {
    const code = char.codePointAt(0) ?? 0;
    const control = (code < 0x20 && char !== "\n" && char !== "\t") || code === 0x7f;
    body += control ? `\\u${code.toString(16).padStart(4, "0")}` : char;
  }
  return body;
}

/**
 * TOML with long texts (prompts, tasks) as multi-line strings, so the file reads like the source did;
 * everything else as smol-toml writes it.
 */
export function toTomlText(fields: Record<string, unknown>, multiline = ["system_prompt", "task"]): string {
  const plain = Object.fromEntries(
    Object.entries(fields).filter(([key, value]) => !isLong(key, value, multiline)),
  );
  const blocks = Object.entries(fields)
    .filter(([key, value]) => isLong(key, value, multiline))
    .map(([key, value]) => `${key} = """\n${multilineBody(value as string)}"""\n`);
  const text = toToml(plain);
  // Before the first table: a multi-line value must not land inside a table.
  const firstTable = text.search(/^\[/m);
  return firstTable === -1
    ? text + blocks.join("")
    : text.slice(0, firstTable) + blocks.join("") + text.slice(firstTable);
}
