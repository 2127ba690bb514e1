import { it } from "vitest";
import { serverWithFakeModel } from "./helpers/fake-openai.ts";
import { json } from "./helpers/server.ts";

const env = serverWithFakeModel();
it("lists", async () => {
  const document = await json(await env.server.request("/api/openapi.json"));
  const missing: string[] = [];
  for (const [path, methods] of Object.entries(document.paths) as any)
    for (const [m, op] of Object.entries(methods) as any) {
      const ok = Object.entries(op.responses).some(([code, r]: any) => code.startsWith("2") && r.content);
      if (!ok) missing.push(`${m.toUpperCase()} ${path} ${op.operationId}`);
    }
  console.log(missing.join("\n"), missing.length);
});
