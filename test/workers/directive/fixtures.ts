import { expect } from "vitest";
import { call } from "../../helpers/control-plane.ts";
import type { JsonBody, TestServer } from "../../helpers/server.ts";

/** A directive that must be created (201), with `key` when given; returns it. */
export async function createDirective(
  server: TestServer,
  body: Record<string, unknown>,
  key?: string,
): Promise<JsonBody> {
  const response = await call(server, "POST", "/api/directives", body, key);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}
