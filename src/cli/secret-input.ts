import { createInterface } from "node:readline";
import { Writable } from "node:stream";

/** More than any key or secret: stdin beyond this is a mistake (a file piped in), refused. */
const MAX_SECRET_BYTES = 64 * 1024;

/**
 * A secret given as `-` or left out is read from standard input (a prompt without echo on a terminal),
 * so it appears in no process list and no shell history; one given as an argument is used as it is.
 */
export async function secretArgument(given: string | undefined, what: string): Promise<string> {
  if (given !== undefined && given !== "-") return given;
  const text = process.stdin.isTTY ? await promptHidden(`${what}: `) : await readStdin(what);
  const value = text.replace(/\r?\n$/, "");
  if (!value.trim()) throw new Error(`No ${what} given: type it at the prompt or pipe it on standard input`);
  return value;
}

async function readStdin(what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_SECRET_BYTES) throw new Error(`The ${what} on standard input is over 64 KiB`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function promptHidden(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  // The terminal echoes what is typed through `output`: a stream that drops it keeps the secret off screen.
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const reader = createInterface({ input: process.stdin, output: silent, terminal: true });
  return new Promise((resolve) => {
    reader.question("", (answer) => {
      reader.close();
      process.stderr.write("\n");
      resolve(answer);
    });
  });
}
