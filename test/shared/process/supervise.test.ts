import { describe, expect, it } from "vitest";
import { supervise } from "../../../src/shared/process/supervise.ts";
import { processesCarrying } from "../../helpers/procs.ts";

/*
 * A sandbox's init runs in a session of its own, and dies with the bubblewrap that started it only once
 * it has asked the kernel to (PR_SET_PDEATHSIG): a cancel landing before that left it, and the program
 * under it, running with no one to stop them. Modelled here without bubblewrap: a child that leaves its
 * parent's process group and keeps the run's output open.
 */
describe.skipIf(process.platform !== "linux")("supervise, cancelled", () => {
  it("ends what the process started in a session of its own too, and nothing outlives the run", async () => {
    const marker = `agentos-supervise-${process.pid}-${Date.now()}`;
    const program = [
      "import os, sys, time",
      "if os.fork() == 0:",
      "    os.setsid()",
      "    time.sleep(120)",
      "    os._exit(0)",
      "print('started', flush=True)",
      "time.sleep(120)",
    ].join("\n");
    const run = supervise({
      command: "/usr/bin/python3",
      args: ["-c", program, marker],
      env: {},
      timeoutMs: 120_000,
      killGraceMs: 0,
    });
    for (let tries = 0; processesCarrying(marker).length < 2 && tries < 400; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(processesCarrying(marker)).toHaveLength(2);
    run.cancel();
    const finished = await run.done;
    expect(finished.reason).toBe("cancelled");
    for (let tries = 0; processesCarrying(marker).length > 0 && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(processesCarrying(marker)).toEqual([]);
  });
});
