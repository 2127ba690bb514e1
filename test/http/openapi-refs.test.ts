import { describe, expect, it } from "vitest";
import { hoistDefinitions } from "../../src/http/openapi-refs.ts";

const tree = (name: string, leaf: string) => ({
  type: "array",
  items: { $ref: `#/$defs/${name}` },
  $defs: { [name]: { type: "object", properties: { [leaf]: { $ref: `#/$defs/${name}` } } } },
});

describe("hoistDefinitions", () => {
  it("moves each schema's $defs into components and points its references there", () => {
    const paths: Record<string, unknown> = { "/a": { get: { schema: tree("Node", "child") } } };
    const schemas = hoistDefinitions(paths);
    expect(paths).toEqual({
      "/a": { get: { schema: { type: "array", items: { $ref: "#/components/schemas/Node" } } } },
    });
    expect(schemas).toEqual({
      Node: { type: "object", properties: { child: { $ref: "#/components/schemas/Node" } } },
    });
  });

  it("keeps one component for a definition used twice and renames a different one of the same name", () => {
    const paths: Record<string, unknown> = {
      "/a": { get: tree("__schema0", "child") },
      "/b": { get: tree("__schema0", "child") },
      "/c": { get: tree("__schema0", "other") },
    };
    const schemas = hoistDefinitions(paths);
    expect(Object.keys(schemas)).toEqual(["schema0", "schema02"]);
    expect(JSON.stringify(paths)).not.toContain("$defs");
    expect(paths["/b"]).toEqual({ get: { type: "array", items: { $ref: "#/components/schemas/schema0" } } });
    expect(paths["/c"]).toEqual({ get: { type: "array", items: { $ref: "#/components/schemas/schema02" } } });
  });
});
