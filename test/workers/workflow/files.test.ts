import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { stateClient } from "../../../src/engine/state/client.ts";
import { MAX_YAML_FILE_BYTES } from "../../../src/shared/yaml-file.ts";
import { loadFileWorkflows } from "../../../src/workers/workflow/definitions.ts";
import { loadWorkflowFiles } from "../../../src/workers/workflow/files.ts";
import { functionInfoCache } from "../../../src/workers/workflow/function-info.ts";
import { registerWorkflow } from "../../../src/workers/workflow/index.ts";
import { createStateEngine } from "../../helpers/engine.ts";

const stateOf = (engine: Engine) => stateClient((request) => engine.trigger(request));

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

  it("skips a file over the YAML limit, and one repeating a key, naming the line", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentos-wf-"));
    dirs.push(dir);
    mkdirSync(join(dir, "workflows"));
    const steps = "steps:\n  - name: a\n    functionId: test::a\n";
    // Parsed on the thread serving requests, where a large one (500 kB of keys: half a minute) held it.
    writeFileSync(
      join(dir, "workflows", "large.yaml"),
      `name: Large\ndescription: "${"a".repeat(MAX_YAML_FILE_BYTES)}"\n${steps}`,
    );
    writeFileSync(join(dir, "workflows", "twice.yaml"), `name: One\n${steps}name: Two\n`);
    const warnings: string[] = [];
    expect(loadWorkflowFiles(dir, (message) => warnings.push(message))).toEqual([]);
    expect(warnings).toEqual([
      expect.stringMatching(/large\.yaml: is larger than 256 KiB of YAML$/),
      expect.stringMatching(/twice\.yaml: Map keys must be unique at line 5, column 1/),
    ]);
  });

  it("gives a file without id its file name, and a re-read updates it instead of adding a copy", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentos-wf-"));
    dirs.push(dir);
    mkdirSync(join(dir, "workflows"));
    const file = join(dir, "workflows", "nightly.yaml");
    const write = (prompt: string) =>
      writeFileSync(
        file,
        `name: Nightly\nsteps:\n  - name: a\n    functionId: test::a\n    promptTemplate: ${prompt}\n`,
      );
    const { engine, close } = createStateEngine();
    engine.worker("test").registerFunction({ id: "test::a" }, () => "ok");
    registerWorkflow(engine.worker("workflow"), { startup: false });
    const trigger = engine.trigger.bind(engine);
    const deps = { state: stateOf(engine), trigger, functionInfo: functionInfoCache(trigger) };
    const reload = () =>
      loadFileWorkflows(
        deps,
        "realm-default",
        loadWorkflowFiles(dir, () => undefined),
        () => undefined,
      );
    const list = async () =>
      (
        (await engine.trigger({ function_id: "workflow::list", payload: {} })) as {
          workflows: Array<{ id: string; version: number; steps: Array<{ promptTemplate: string }> }>;
        }
      ).workflows;
    write("first");
    await reload();
    await reload();
    expect((await list()).map((w) => [w.id, w.version])).toEqual([["nightly", 1]]);
    write("second");
    await reload();
    const [updated] = await list();
    expect([updated?.id, updated?.version, updated?.steps[0]?.promptTemplate]).toEqual([
      "nightly",
      2,
      "second",
    ]);
    await close();
  });
});
