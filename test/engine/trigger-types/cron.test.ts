import { afterEach, describe, expect, it, vi } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { validateCronExpression } from "../../../src/engine/trigger-types/cron.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { createTestEngine } from "../../helpers/engine.ts";

type CronPayload = { trigger: string; job_id: string; scheduled_time: string; actual_time: string };

let engine: Engine;

afterEach(() => engine?.shutdown());

function registrationError(config: unknown): AppError {
  try {
    engine.registerTrigger("cron-test", { type: "cron", function_id: "cron::tick", config });
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error(`expected ${JSON.stringify(config)} to be refused`);
}

function ticks(): CronPayload[] {
  const received: CronPayload[] = [];
  engine.registerFunction("cron-test", { id: "cron::tick" }, (payload) => {
    received.push(payload as CronPayload);
  });
  return received;
}

/** Lets more than one whole second pass, so an every-second schedule would have fired. */
const sleepPastNextSecond = () => new Promise((resolve) => setTimeout(resolve, 1_300));

describe("cron trigger registration", () => {
  it("refuses an invalid expression with a validation error naming the expression", () => {
    engine = createTestEngine();
    for (const expression of ["61 * * * * *", "* * 25 * * *", "a b c d e f", "*/0 * * * * *"]) {
      const error = registrationError({ expression });
      expect(error.code).toBe("validation");
      expect(error.message).toContain(`"${expression}"`);
    }
    expect(engine.triggers.list()).toEqual([]);
  });

  it("refuses a five-field expression: six fields, seconds first, are required", () => {
    engine = createTestEngine();
    const error = registrationError({ expression: "*/5 * * * *" });
    expect(error.code).toBe("validation");
    expect(error.message).toContain('"*/5 * * * *"');
    expect(error.message).toMatch(/six fields/);
    expect(error.message).toMatch(/got 5/);
  });

  it("refuses seven-field and nickname expressions", () => {
    engine = createTestEngine();
    for (const expression of ["0 0 0 1 1 * 2030", "@hourly"]) {
      expect(registrationError({ expression }).message).toContain(`"${expression}"`);
    }
  });

  it("refuses a well-formed expression that never fires (February 31st, April 31st)", () => {
    engine = createTestEngine();
    for (const expression of ["0 0 0 31 2 *", "0 0 0 30 2 *", "0 0 0 31 4 *"]) {
      const error = registrationError({ expression });
      expect(error.code).toBe("validation");
      expect(error.message).toBe(`Invalid cron expression "${expression}": it never fires`);
    }
    expect(engine.triggers.list()).toEqual([]);
    // February 29th comes every four years, and a weekday list makes day 31 of February an "or".
    expect(() => validateCronExpression("0 0 0 29 2 *")).not.toThrow();
    expect(() => validateCronExpression("0 0 0 31 2 MON")).not.toThrow();
  });

  it("refuses a config without an expression", () => {
    engine = createTestEngine();
    for (const config of [
      {},
      { expression: "" },
      { expression: 5 },
      "* * * * * *",
      { expression: "* * * * * *", x: 1 },
    ]) {
      expect(registrationError(config).code).toBe("validation");
    }
  });

  it("accepts six-field expressions, including ranges, lists, steps and names", () => {
    for (const expression of [
      "* * * * * *",
      "0 */5 * * * *",
      "30 0 9-17 * * MON-FRI",
      "0 0 0 1,15 JAN *",
      " 0 0 * * * * ",
    ]) {
      expect(() => validateCronExpression(expression), expression).not.toThrow();
    }
  });
});

describe("cron trigger firing", () => {
  it("calls the function every second with {trigger, job_id, scheduled_time, actual_time}", async () => {
    engine = createTestEngine();
    const received = ticks();
    const handle = engine.registerTrigger("cron-test", {
      type: "cron",
      function_id: "cron::tick",
      config: { expression: "* * * * * *" },
    });
    await vi.waitFor(() => expect(received.length).toBeGreaterThan(0), { timeout: 3_000, interval: 50 });
    const payload = received[0];
    expect(Object.keys(payload).sort()).toEqual(["actual_time", "job_id", "scheduled_time", "trigger"]);
    expect(payload.trigger).toBe("cron");
    expect(payload.job_id).toBe(handle.id);
    const scheduled = Date.parse(payload.scheduled_time);
    const actual = Date.parse(payload.actual_time);
    expect(new Date(scheduled).toISOString()).toBe(payload.scheduled_time);
    expect(new Date(actual).toISOString()).toBe(payload.actual_time);
    expect(scheduled % 1000).toBe(0);
    expect(scheduled).toBeLessThanOrEqual(actual);
  });

  it.each([
    ["once the trigger is unregistered", (handle: { unregister(): void }) => handle.unregister()],
    ["when the engine shuts down", () => engine.shutdown()],
  ])("stops firing %s", async (_when, stop) => {
    engine = createTestEngine();
    const received = ticks();
    const handle = engine.registerTrigger("cron-test", {
      type: "cron",
      function_id: "cron::tick",
      config: { expression: "* * * * * *" },
    });
    await vi.waitFor(() => expect(received.length).toBeGreaterThan(0), { timeout: 3_000, interval: 50 });
    stop(handle);
    const count = received.length;
    await sleepPastNextSecond();
    expect(received.length).toBe(count);
  });

  it("a cron trigger registered before its function exists fires once the function appears", async () => {
    engine = createTestEngine();
    const handle = engine.registerTrigger("cron-test", {
      id: "early-bird",
      type: "cron",
      function_id: "cron::tick",
      config: { expression: "* * * * * *" },
    });
    const received = ticks();
    await vi.waitFor(() => expect(received.length).toBeGreaterThan(0), { timeout: 3_000, interval: 50 });
    expect(received[0].job_id).toBe("early-bird");
    handle.unregister();
  });
});
