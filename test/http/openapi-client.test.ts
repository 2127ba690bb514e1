import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { generate } from "openapi-typescript-codegen";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverWithFakeModel } from "../helpers/fake-openai.ts";
import { json, TEST_ADMIN_KEY } from "../helpers/server.ts";

/**
 * GET /api/openapi.json as a client generator sees it (issue #19): a typed fetch client is generated
 * from the running service's document, calls written against it are type-checked by the compiler, and
 * then run against the same service. A misspelled field must not compile: the types are real.
 */
const run = promisify(execFile);
const env = serverWithFakeModel({}, { shared: true });
const dir = mkdtempSync(join(tmpdir(), "agentos-openapi-client-"));

const TSCONFIG = {
  compilerOptions: {
    target: "esnext",
    module: "esnext",
    moduleResolution: "bundler",
    lib: ["esnext", "dom"],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  },
};

/** Calls a user would write with the generated client: every answer is used through its type. */
const CALLS = `
import { AgentService, LedgerService, OpenAPI, RealmService, WorkflowService } from "./client";

export async function everyday(base: string, token: string) {
  OpenAPI.BASE = base;
  OpenAPI.TOKEN = token;
  const realm = await RealmService.realmCreate({ name: "typed", owner: "ops" });
  const created = await AgentService.agentCreate({ name: "typed-agent", model: "gpt-4o", realmId: realm.id });
  const agent = await AgentService.agentGet(created.id);
  const reply = await AgentService.agentMessage(agent.id, { message: "hello" });
  const sessions = await AgentService.agentSessions(agent.id);
  const firstSession: string | undefined = sessions.sessions[0]?.id;
  const workflow = await WorkflowService.workflowCreate({
    name: "typed-flow",
    realmId: realm.id,
    steps: [{ name: "list", functionId: "catalog::aliases" }],
  });
  const started = await WorkflowService.workflowRun({ workflowId: workflow.id, realmId: realm.id });
  const status: "running" | "completed" | "failed" | "interrupted" | "cancelled" = started.status;
  const summary = await LedgerService.ledgerSummary(realm.id);
  const cents: number = summary.totalCents;
  return {
    realmStatus: realm.status,
    agentName: agent.name,
    resolvedTools: agent.resolvedTools,
    reply: reply.content,
    sessionId: reply.sessionId,
    firstSession,
    workflowVersion: workflow.version,
    status,
    cents,
  };
}
`;

async function typeCheck(): Promise<{ ok: boolean; output: string }> {
  const tsc = join(process.cwd(), "node_modules", ".bin", "tsc");
  return run(tsc, ["-p", dir]).then(
    ({ stdout }) => ({ ok: true, output: stdout }),
    (error: { stdout?: string; stderr?: string }) => ({
      ok: false,
      output: `${error.stdout ?? ""}${error.stderr ?? ""}`,
    }),
  );
}

beforeAll(async () => {
  const document = await json(await env.server.request("/api/openapi.json"));
  await generate({ input: document, output: join(dir, "client"), httpClient: "fetch", useUnionTypes: true });
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ ...TSCONFIG, include: ["client", "*.ts"] }));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a client generated from the OpenAPI document", () => {
  it("type-checks everyday calls, which then work against the running service", async () => {
    writeFileSync(join(dir, "calls.ts"), CALLS);
    const checked = await typeCheck();
    expect(checked.output).toBe("");
    expect(checked.ok).toBe(true);

    env.fake.reply({ content: "hi from the typed client" });
    const { everyday } = await import(join(dir, "calls.ts"));
    const result = await everyday(env.server.url, TEST_ADMIN_KEY);
    expect(result).toMatchObject({
      realmStatus: "Active",
      agentName: "typed-agent",
      reply: "hi from the typed client",
      workflowVersion: 1,
      status: "completed",
      cents: expect.any(Number),
    });
    expect(result.firstSession).toBe(result.sessionId);
    expect(Array.isArray(result.resolvedTools)).toBe(true);
  }, 60_000);

  it("refuses a misspelled answer field or a wrong argument at compile time", async () => {
    writeFileSync(
      join(dir, "calls.ts"),
      `import { AgentService, RealmService } from "./client";
export async function wrong() {
  const agent = await AgentService.agentGet("x");
  const name: string = agent.nmae;
  await RealmService.realmCreate({ name: "no owner" });
  return name;
}
`,
    );
    const checked = await typeCheck();
    expect(checked.ok).toBe(false);
    expect(checked.output).toMatch(/Property 'nmae' does not exist/);
    expect(checked.output).toMatch(/owner/);
  }, 60_000);
});
