import type { InvocationContext } from "../../src/engine/types.ts";
import type { TestServer } from "./server.ts";

/**
 * Holds the calls of `functionId` that `matches` until release(), before they run or (`after`) once they
 * have run with their answer kept back: how a test puts a write between another call's check and its
 * effect (a delete's purge, say) without timing. The original function is registered again in its place.
 */
export function holdCalls(
  server: TestServer,
  functionId: string,
  matches: (input: Record<string, unknown>, context: InvocationContext) => boolean,
  options: { after: boolean },
): { held(): number; release(): void } {
  const { engine } = server.service;
  const original = engine.functions.get(functionId);
  if (!original) throw new Error(`${functionId} is not registered`);
  let open = () => {};
  const released = new Promise<void>((resolve) => {
    open = resolve;
  });
  let armed = true;
  let held = 0;
  engine
    .worker(`hold ${functionId}`)
    .registerFunction({ id: functionId, input: original.input }, async (input, context) => {
      const wait = armed && matches(input as Record<string, unknown>, context);
      if (wait && !options.after) {
        held++;
        await released;
      }
      const answer = await original.handler(input, context);
      if (wait && options.after) {
        held++;
        await released;
      }
      return answer;
    });
  return {
    held: () => held,
    release: () => {
      armed = false;
      open();
    },
  };
}

/** Resolves once `check` holds (polled every 5 ms). */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Every stored record (outside the append-only audit log) whose scope, key or value names one of `texts`. */
export async function recordsMentioning(server: TestServer, texts: string[]): Promise<string[]> {
  const trigger = server.service.engine.trigger.bind(server.service.engine);
  const { groups } = (await trigger({ function_id: "state::list_groups", payload: {} })) as {
    groups: string[];
  };
  const found: string[] = [];
  for (const scope of groups.filter((group) => !group.startsWith("audit"))) {
    let cursor: string | undefined;
    do {
      const page = (await trigger({
        function_id: "state::list",
        payload: { scope, limit: 1000, cursor },
      })) as { items: Array<{ key: string; value: unknown }>; nextCursor: string | null };
      for (const item of page.items) {
        const text = `${scope} ${item.key} ${JSON.stringify(item.value)}`;
        if (texts.some((wanted) => text.includes(wanted))) found.push(`${scope}/${item.key}`);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  return found;
}
