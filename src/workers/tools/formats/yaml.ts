import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { parse } from "yaml";
import { AppError, badRequest } from "../../../shared/errors.ts";

/** Where the yaml package is, for the parsing thread (an eval'd thread resolves nothing on its own). */
const YAML_MODULE = createRequire(import.meta.url).resolve("yaml");

/**
 * The parsing thread: the yaml package at about a megabyte a second, and its duplicate-key check
 * compares every key of a mapping with every other (a 400 kB mapping took 8 s), so neither runs on the
 * thread that serves requests.
 */
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const { parse } = require(workerData.module);
try {
  parentPort.postMessage({ value: parse(workerData.text, { maxAliasCount: 1000, prettyErrors: true }) ?? null });
} catch (error) {
  parentPort.postMessage({ error: String(error && error.message).split("\\n")[0] });
}
`;

/** How long a text may take to parse, and the heap the thread may use (a denser text is refused). */
export const YAML_TIMEOUT_MS = 10_000;
const YAML_HEAP_MB = 512;

/** Parsing threads at once (each may use YAML_HEAP_MB): later calls wait their turn. */
const MAX_THREADS = 2;
let running = 0;
const waiting: Array<() => void> = [];

/**
 * Texts this short are parsed here: a thread costs tens of milliseconds to start, and the quadratic
 * duplicate-key check on 16 KB takes about one.
 */
const ON_THREAD_BYTES = 16 * 1024;

/**
 * The YAML text's value: a short one parsed here, a longer one on a thread of its own. A parse error, a
 * timeout or the thread's heap limit is a 400.
 */
export async function parseYaml(text: string): Promise<unknown> {
  if (Buffer.byteLength(text) <= ON_THREAD_BYTES) {
    try {
      return parse(text, { maxAliasCount: 1000, prettyErrors: true }) ?? null;
    } catch (error) {
      throw badRequest(`YAML: ${String((error as Error).message).split("\n")[0]}`);
    }
  }
  return parseYamlOffThread(text);
}

/** The YAML text's value, parsed on a thread of its own: a parse error, a timeout or the heap limit is a 400. */
async function parseYamlOffThread(text: string): Promise<unknown> {
  // A finished call hands its place to the next waiting one, so no more than MAX_THREADS ever run.
  if (running < MAX_THREADS) running++;
  else await new Promise<void>((turn) => waiting.push(turn));
  try {
    return await parseOnThread(text);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function parseOnThread(text: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(THREAD, {
      eval: true,
      workerData: { module: YAML_MODULE, text },
      resourceLimits: { maxOldGenerationSizeMb: YAML_HEAP_MB },
    });
    const finish = (outcome: () => void) => {
      clearTimeout(timer);
      void worker.terminate();
      outcome();
    };
    const timer = setTimeout(
      () => finish(() => reject(badRequest(`YAML: parsing took longer than ${YAML_TIMEOUT_MS} ms`))),
      YAML_TIMEOUT_MS,
    );
    worker.once("message", (answer: { value?: unknown; error?: string }) =>
      finish(() =>
        answer.error === undefined ? resolve(answer.value) : reject(badRequest(`YAML: ${answer.error}`)),
      ),
    );
    worker.once("error", (error) =>
      finish(() =>
        reject(
          (error as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY"
            ? badRequest(`YAML: parsing needed more than ${YAML_HEAP_MB} MB`)
            : new AppError("internal", `YAML: the parsing thread failed: ${error.message}`),
        ),
      ),
    );
  });
}
