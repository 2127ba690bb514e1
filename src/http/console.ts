import { readFile } from "node:fs/promises";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";

/**
 * The web console (issue #20, DESIGN §5): static files at /console, built from src/console/web by
 * `npm run build:console` (npm install and npm start run it) into dist/console. The browser code
 * speaks only the public HTTP API with the key the user enters; these routes need no key.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "console");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * Only the console's own code runs: no inline script, no other origin (the API is this origin), nothing
 * it does not use (plugins, frames, workers, fonts). Everything it shows may be hostile (a steered
 * model's text, names a realm key chose), so markup parsed from a string is refused too: Trusted Types
 * with no policy make innerHTML and its kin throw instead of letting a future slip run script.
 */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'; " +
  "require-trusted-types-for 'script'; trusted-types 'none'";

export function registerConsole(app: FastifyInstance): void {
  app.get("/", (_request, reply) => reply.redirect("/console/", 302));
  // The router ignores a trailing slash, so /console and /console/ meet here: only the first moves.
  app.get("/console", (request, reply) =>
    request.url.split("?")[0] === "/console" ? reply.redirect("/console/", 302) : sendFile(reply, ""),
  );
  app.get("/console/*", async (request, reply) => {
    request.routeTemplate = "/console/*";
    const path = (request.params as { "*": string })["*"] ?? "";
    return sendFile(reply, path);
  });
}

/** Each built file is read once (a console rebuilt while the service runs shows after a restart). */
const files = new Map<string, Promise<Buffer | null>>();
const read = (file: string) => {
  let body = files.get(file);
  if (!body) {
    body = readFile(file).catch(() => null);
    // A file that is not there yet (the console built after start) is looked for again next time.
    body.then((found) => found === null && files.delete(file));
    files.set(file, body);
  }
  return body;
};

async function sendFile(reply: FastifyReply, path: string): Promise<FastifyReply> {
  const file = resolveFile(path);
  if (!file) return reply.code(404).send({ error: `No console file ${path}` });
  const body = await read(file);
  if (body === null) {
    if (file.endsWith("index.html")) {
      return reply.code(503).send({ error: "The console is not built: run npm run build:console" });
    }
    return reply.code(404).send({ error: `No console file ${path}` });
  }
  const html = file.endsWith(".html");
  return (
    reply
      .header("Content-Type", TYPES[extname(file)] ?? "application/octet-stream")
      .header("Cache-Control", html ? "no-cache" : "max-age=300")
      .header("Content-Security-Policy", CSP)
      // The page holds the admin key: no other window keeps a handle on it, no address leaves with a link.
      .header("Cross-Origin-Opener-Policy", "same-origin")
      .header("Referrer-Policy", "no-referrer")
      .send(body)
  );
}

/**
 * The built file a console path names (Preact's modules are built beside ours, under vendor/), or
 * index.html for a path without an extension; null for anything outside dist/console.
 */
function resolveFile(path: string): string | null {
  let clean: string;
  try {
    clean = decodeURIComponent(path.split("?")[0] ?? "");
  } catch {
    return null;
  }
  if (clean === "" || extname(clean) === "") return join(ROOT, "index.html");
  const file = normalize(join(ROOT, clean));
  return file.startsWith(ROOT + sep) ? file : null;
}
