import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { httpToolRequest } from "../../../src/workers/integrations/http-tool.ts";
import { type HttpTool, integrationFile } from "../../../src/workers/integrations/schema.ts";

/** An HTTP tool as a file declares it (defaults applied). */
function tool(fields: Partial<HttpTool> & { url: string }): HttpTool {
  const file = integrationFile.parse({ http: [{ name: "lookup", ...fields }] });
  return (file.http as HttpTool[])[0] as HttpTool;
}

describe("an HTTP tool's request", () => {
  it("puts arguments in the URL's placeholders, encoded, and the others in the query", () => {
    const request = httpToolRequest(
      tool({ url: "https://api.example.com/v1/users/{{id}}/profile", parameters: { id: {}, fields: {} } }),
      { id: "a b/c?d", fields: "name" },
    );
    expect(request.url.href).toBe("https://api.example.com/v1/users/a%20b%2Fc%3Fd/profile?fields=name");
  });

  it("refuses arguments that would climb the path with . or .. segments", () => {
    const repos = tool({ url: "https://api.example.com/repos/{{owner}}/{{repo}}/issues" });
    for (const [owner, repo] of [
      ["..", ".."],
      [".", "x"],
      ["x", ".."],
    ])
      expect(() => httpToolRequest(repos, { owner, repo }), `${owner}/${repo}`).toThrow(
        /segment of its path/,
      );
    // A percent sign is encoded: "%2e%2e" stays text, never a segment the parser resolves.
    expect(httpToolRequest(repos, { owner: "%2e%2e", repo: "x" }).url.pathname).toBe(
      "/repos/%252e%252e/x/issues",
    );
    const joined = tool({ url: "https://api.example.com/v1/{{a}}{{b}}/x" });
    expect(() => httpToolRequest(joined, { a: ".", b: "." })).toThrow(/segment of its path/);
  });

  it("keeps the path it was given for any argument (property)", () => {
    const repos = tool({ url: "https://api.example.com/repos/{{owner}}/issues" });
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 12 }), (owner) => {
        let url: URL;
        try {
          url = httpToolRequest(repos, { owner }).url;
        } catch {
          return;
        }
        expect(url.host).toBe("api.example.com");
        expect(url.pathname.startsWith("/repos/")).toBe(true);
        expect(url.pathname.endsWith("/issues")).toBe(true);
        expect(url.pathname.split("/")).toHaveLength(4);
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses undeclared arguments and a second value for the URL's own query parameters", () => {
    const keyed = tool({ url: "https://api.example.com/q?api_key=FIXED", parameters: { q: {} } });
    expect(() => httpToolRequest(keyed, { q: "x", format: "raw" })).toThrow(
      /format: not arguments of lookup/,
    );
    const open = tool({ url: "https://api.example.com/q?api_key=FIXED" });
    expect(() => httpToolRequest(open, { api_key: "mine" })).toThrow(/api_key: set by the URL/);
    expect(httpToolRequest(keyed, { q: "x" }).url.search).toBe("?api_key=FIXED&q=x");
  });
});
