import fc from "fast-check";
import type { RealmFixture } from "./fixtures.ts";

/**
 * The route fuzzer (issue #22): hostile requests generated with fast-check from an OpenAPI operation's
 * own schema, and the checks every answer must pass. test/http/route-fuzz.test.ts runs it over every
 * operation of the document; its own test plants a route that fails and shows it caught.
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  items?: JsonSchema;
}

export interface Operation {
  operationId: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: JsonSchema }>;
  requestBody?: { content: { "application/json": { schema: JsonSchema } } };
  responses: Record<string, unknown>;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** Strings a hostile client sends: empty, huge, NUL, lone surrogates, traversal, encodings, other ids. */
function hostileText(ids: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom(
      "",
      " ",
      "\u0000",
      "a\u0000b",
      "\ud800",
      "\udfff x",
      "..",
      "../../etc/passwd",
      "%00",
      "%2F",
    ),
    fc.constantFrom("x".repeat(5000), "é".repeat(3000)),
    fc.constantFrom("realm-nothing", "agent-nothing", "wf-nothing", ...ids),
    fc.string({ unit: "binary", maxLength: 40 }),
  );
}

/** A value for a property: of its own type (at and past its bounds) or of the wrong one. */
function valueFor(schema: JsonSchema | undefined, ids: string[], depth = 0): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema?.type) ? schema?.type[0] : schema?.type;
  const min = schema?.minimum ?? 0;
  const max = schema?.maximum ?? 1_000_000;
  const ownType: fc.Arbitrary<unknown> =
    schema?.enum !== undefined
      ? fc.constantFrom(...schema.enum)
      : type === "integer" || type === "number"
        ? fc.constantFrom(min, max, min - 1, max + 1, 0.5, -1, 1e308, Number.MAX_SAFE_INTEGER + 2)
        : type === "boolean"
          ? fc.boolean()
          : type === "array"
            ? fc.array(depth < 3 ? valueFor(schema?.items, ids, depth + 1) : fc.constant(null), {
                maxLength: 4,
              })
            : type === "object"
              ? fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })
              : hostileText(ids);
  return fc.oneof(
    { weight: 3, arbitrary: ownType },
    { weight: 1, arbitrary: fc.constantFrom(null, true, 12, "text", [], {}, deepNesting(200)) },
  );
}

function deepNesting(levels: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < levels; i++) value = { nested: value };
  return value;
}

/** A body from the schema: each known property maybe present, maybe hostile, plus unknown extras. */
function bodyFor(schema: JsonSchema | undefined, ids: string[]): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema?.properties ?? {});
  const known = fc.record(
    Object.fromEntries(properties.map(([name, property]) => [name, valueFor(property, ids)])),
    { requiredKeys: [] },
  );
  const extra = fc.dictionary(
    fc.constantFrom("__proto__", "constructor", "extra", "realmId", "zz"),
    fc.jsonValue(),
    {
      maxKeys: 2,
    },
  );
  return fc
    .tuple(known, fc.option(extra, { nil: undefined }))
    .map(([body, more]) => ({ ...(more ?? {}), ...body }));
}

/** A path segment, percent-encoded; a lone surrogate (which encodeURIComponent refuses) as its raw bytes. */
function encodeSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return "%ED%A0%80";
  }
}

/** The ways a request can be malformed besides its fields. */
type Mangling = "json" | "wrong-type" | "truncated" | "oversized" | "not-json";

/** One hostile request for an operation. */
export function requestFor(
  path: string,
  method: string,
  op: Operation,
  fixture: Pick<RealmFixture, "ids"> | undefined,
): fc.Arbitrary<FuzzRequest> {
  const ids = Object.values(fixture?.ids ?? {}).filter((id): id is string => Boolean(id));
  const pathParams = (op.parameters ?? []).filter((param) => param.in === "path");
  const queryParams = (op.parameters ?? []).filter((param) => param.in === "query");
  const segment = fc.oneof(
    hostileText(ids).map(encodeSegment),
    fc.constantFrom("..", "%2e%2e", "%00", "a%2Fb", "%2F..%2F", "%ZZ", "x".repeat(3000)),
  );
  // Mostly no query at all: unknown parameters are refused before anything else, hiding deeper bugs.
  const query = fc.oneof(
    { weight: 2, arbitrary: fc.constant({}) },
    {
      weight: 1,
      arbitrary: fc.dictionary(
        fc.oneof(
          fc.constantFrom(...queryParams.map((param) => param.name), "unknown", "limit", "cursor"),
          fc.string(),
        ),
        hostileText(ids),
        { maxKeys: 3 },
      ),
    },
  );
  const mangling = fc.constantFrom<Mangling>(
    "json",
    "json",
    "json",
    "wrong-type",
    "truncated",
    "oversized",
    "not-json",
  );
  const schema = op.requestBody?.content["application/json"].schema;
  return fc
    .record({
      segments: fc.array(segment, { minLength: pathParams.length, maxLength: pathParams.length }),
      query,
      body: bodyFor(schema, ids),
      mangling,
    })
    .map(({ segments, query: params, body, mangling: how }) => {
      let concrete = path;
      pathParams.forEach((param, i) => {
        concrete = concrete.replace(`{${param.name}}`, segments[i] ?? "x");
      });
      const search = new URLSearchParams(params as Record<string, string>).toString();
      const url = search ? `${concrete}?${search}` : concrete;
      const request: FuzzRequest = { method: method.toUpperCase(), path: url, headers: {} };
      if (method === "get" || method === "delete") return request;
      const text = JSON.stringify(body);
      if (how === "wrong-type")
        return { ...request, headers: { "content-type": "text/xml" }, body: `<a>${text}</a>` };
      if (how === "truncated") {
        return {
          ...request,
          headers: { "content-type": "application/json" },
          body: text.slice(0, Math.max(1, text.length / 2)),
        };
      }
      if (how === "oversized") {
        return {
          ...request,
          headers: { "content-type": "application/json" },
          body: `{"x":"${"y".repeat(1_100_000)}"}`,
        };
      }
      if (how === "not-json")
        return { ...request, headers: { "content-type": "application/json" }, body: "{nope" };
      return { ...request, headers: { "content-type": "application/json" }, body: text };
    });
}

/** What is wrong with an answer, or null: a 5xx, an undocumented status, or an error body off the contract. */
export function answerProblem(op: Operation, path: string, status: number, text: string): string | null {
  if (status >= 500) return `server error ${status}: ${text.slice(0, 300)}`;
  if (status < 400) return null;
  if (!(String(status) in op.responses)) return `status ${status} is not documented for this operation`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `error body is not JSON: ${text.slice(0, 100)}`;
  }
  const error = (body as { error?: unknown } | null)?.error;
  const openAi = path.startsWith("/v1/");
  const plain = typeof error === "string" && error.length > 0;
  // 408 and 431 are answered on the socket before the request line is read: no route is known yet.
  const wellFormed = openAi
    ? typeof (error as { message?: unknown } | undefined)?.message === "string" ||
      ((status === 408 || status === 431) && plain)
    : plain;
  return wellFormed ? null : `error body off the contract: ${text.slice(0, 200)}`;
}
