import type { FastifyInstance, FastifyRequest } from "fastify";
import { badRequest } from "../shared/errors.ts";
import { exceedsDepth } from "../shared/json-depth.ts";

export const MAX_JSON_DEPTH = 64;

declare module "fastify" {
  interface FastifyRequest {
    /** The body exactly as received, for signature checks over the raw bytes. */
    rawBody?: string;
  }
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badRequest(`Malformed JSON body: ${(error as Error).message}`);
  }
  if (exceedsDepth(value, MAX_JSON_DEPTH))
    throw badRequest(`JSON body nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/** A JSON object or array: a form body never is one (its first character would be a field name). */
function looksLikeJson(text: string): boolean {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}

/** JSON and form bodies are parsed; anything else arrives as text. The raw text is kept on the request. */
export function registerBodyParsers(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  const json = (
    request: FastifyRequest,
    body: string | Buffer,
    done: (error: Error | null, value?: unknown) => void,
  ) => {
    request.rawBody = body as string;
    try {
      done(null, parseJson(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  };
  app.addContentTypeParser("application/json", { parseAs: "string", bodyLimit }, json);
  app.addContentTypeParser(/^application\/[\w.+-]+\+json$/, { parseAs: "string", bodyLimit }, json);
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit },
    (request, body, done) => {
      request.rawBody = body as string;
      if (looksLikeJson(body as string)) {
        done(
          badRequest(
            "The body is JSON but its Content-Type is application/x-www-form-urlencoded (what curl -d sends): " +
              "send the header Content-Type: application/json",
          ),
          undefined,
        );
        return;
      }
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );
  app.addContentTypeParser("*", { parseAs: "string", bodyLimit }, (request, body, done) => {
    request.rawBody = body as string;
    done(null, body);
  });
}
