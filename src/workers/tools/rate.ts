import { casUpdate } from "../../engine/state/cas.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { AppError } from "../../shared/errors.ts";

/**
 * Counts one more action under `key` in the current UTC minute, in state (so on every node), refusing
 * (429, `refusal`) the one past `max`: what an agent's model may do only so often.
 */
export async function countPerMinute(
  trigger: TriggerFn,
  scope: string,
  key: string,
  max: number,
  refusal: string,
): Promise<void> {
  const now = new Date();
  const minute = now.toISOString().slice(0, 16);
  await casUpdate<{ minute: string; count: number }>(stateClient(trigger), scope, key, ({ value }) => {
    const count = value?.minute === minute ? value.count : 0;
    if (count >= max) throw new AppError("rate_limited", refusal, { retryAfter: 60 - now.getUTCSeconds() });
    return { minute, count: count + 1 };
  });
}
