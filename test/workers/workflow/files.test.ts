import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { registerWorkflow } from "../../../src/workers/workflow/index.ts";
import { createStateEngine } from "../../helpers/engine.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("workflows/*.yaml", () => {
  it("loads valid definitions at start and reports the invalid ones by file and field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentos-wf-"));
    dirs.push(dir);
    mkdirSync(join(dir, "workflows"));
    writeFileSync(
      join(dir, "workflows", "greet.yaml"),
      "id: greet\nname: Greeting\nsteps:\n  - name: hello\n    functionId: test::hello\n    promptTemplate: Hi {{input}}\n",
    );
    writeFileSync(
      join(dir, "workflows", "broken.yml"),
      "name: Broken\nsteps:\n  - name: x\n    mode: teleport\n",
    );
    writeFileSync(join(dir, "workflows", "notyaml.yaml"), "steps: [unclosed\n");
    const { engine, close } = createStateEngine();
    const warnings: string[] = [];
    const { resumed } = registerWorkflow(engine.worker("workflow"), {
      directory: dir,
      warn: (m) => warnings.push(m),
    });
    await resumed;
    const { workflows } = (await engine.trigger({ function_id: "workflow::list", payload: {} })) as {
      workflows: Array<{ id: string; steps: unknown[] }>;
    };
    expect(workflows.map((w) => w.id)).toEqual(["greet"]);
    expect(warnings.some((w) => w.includes("broken.yml") && w.includes("steps.0.functionId"))).toBe(true);
    expect(warnings.some((w) => w.includes("notyaml.yaml"))).toBe(true);
    await close();
  });
});
