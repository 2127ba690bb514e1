import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "../../src/channels/envelope.ts";

/** How a fixture's body was sent, and what proves it (`<name>.request.json` beside `<name>.body.txt`). */
interface FixtureRequest {
  source: string;
  method?: string;
  path?: string;
  query?: Record<string, string>;
  headers: Record<string, string>;
  env?: Record<string, string>;
  secret: string;
  nowMs: number;
}

export interface Fixture {
  envelope: Envelope;
  secret: string;
  nowMs: number;
  env: NodeJS.ProcessEnv;
}

const FIXTURES = join(import.meta.dirname, "../../src/channels");

/** The body as the service parses it before an adapter sees it: JSON, form fields, or the text itself. */
function parsedBody(raw: string, contentType = ""): unknown {
  if (contentType.startsWith("application/x-www-form-urlencoded"))
    return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** A recorded platform request as the envelope a webhook function receives. */
export function fixture(platform: string, name: string): Fixture {
  const dir = join(FIXTURES, platform, "__fixtures__");
  const rawBody = readFileSync(join(dir, `${name}.body.txt`), "utf8");
  const request = JSON.parse(readFileSync(join(dir, `${name}.request.json`), "utf8")) as FixtureRequest;
  const envelope: Envelope = {
    body: parsedBody(rawBody, request.headers["content-type"]),
    rawBody,
    headers: request.headers,
    query_params: request.query ?? {},
    path_params: {},
    method: request.method ?? "POST",
    path: request.path ?? `/webhook/${platform}`,
  };
  return { envelope, secret: request.secret, nowMs: request.nowMs, env: request.env ?? {} };
}

/** The same request with its body changed after signing (and re-parsed, as the service would). */
export function tampered(envelope: Envelope, rawBody: string): Envelope {
  const contentType = envelope.headers["content-type"];
  return {
    ...envelope,
    rawBody,
    body: parsedBody(rawBody, typeof contentType === "string" ? contentType : ""),
  };
}
