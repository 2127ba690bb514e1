import { parse } from "smol-toml";
import type { z } from "zod";
import { readRegularFile } from "./fs/regular-file.ts";

export interface FileProblem {
  file: string;
  message: string;
}

/**
 * One TOML file checked against its schema: the value, or a problem naming the file and the line
 * (unreadable TOML) or the field (a value the schema refuses). With `unwrap`, the fields may also sit
 * in a table of that name (`[agent]`).
 */
export function readTomlFile<T>(
  file: string,
  schema: z.ZodType<T>,
  unwrap?: string,
): { value?: T; problem?: FileProblem } {
  let text: string;
  try {
    text = readRegularFile(file);
  } catch (error) {
    return { problem: { file, message: (error as Error).message } };
  }
  let data: unknown;
  try {
    data = parse(text);
  } catch (error) {
    const { message, line, column } = error as Error & { line?: number; column?: number };
    const where = line === undefined ? "" : ` (line ${line}, column ${column})`;
    return { problem: { file, message: `not valid TOML${where}: ${message.split("\n")[0]}` } };
  }
  const table =
    unwrap && data && typeof data === "object" && unwrap in data
      ? (data as Record<string, unknown>)[unwrap]
      : data;
  const result = schema.safeParse(table);
  if (result.success) return { value: result.data };
  const issue = result.error.issues[0];
  const field = issue?.path.join(".") || "(file)";
  return { problem: { file, message: `${field}: ${issue?.message ?? "invalid"}` } };
}
