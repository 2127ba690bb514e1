// Builds the SQLite extension of the text index (native/fts5-rank.c → dist/native/agentos-rank.so):
// `npm install` runs this after ensure-packages.mjs has installed a C compiler and SQLite's headers.
// Never fails the install: without the extension the index ranks with FTS5's own bm25(), which is
// correct but counts every query phrase over the whole table (slow with many agents).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "native", "fts5-rank.c");
const target = join(root, "dist", "native", "agentos-rank.so");

const upToDate = () => existsSync(target) && statSync(target).mtimeMs >= statSync(source).mtimeMs;
if (process.platform !== "linux") {
  console.warn("agentos: the text index's ranking extension is built on Linux only; ranking with bm25()");
  process.exit(0);
}
if (upToDate()) process.exit(0);

mkdirSync(dirname(target), { recursive: true });
const partial = `${target}.${process.pid}`;
const compiler = process.env.CC || "cc";
const built = spawnSync(compiler, ["-O2", "-fPIC", "-shared", "-o", partial, source, "-lm"], {
  stdio: ["ignore", "inherit", "inherit"],
});
if (built.error || built.status !== 0) {
  const why = built.error ? built.error.message : `${compiler} exited with ${built.status}`;
  console.warn(
    `agentos: could not build the text index's ranking extension (${why}); it needs a C compiler and SQLite's headers (apt-get install -y gcc libsqlite3-dev). Ranking with bm25() meanwhile.`,
  );
  process.exit(0);
}
renameSync(partial, target);
console.log(`agentos: built ${target}`);
