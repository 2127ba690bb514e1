import { systemPrincipal, type TriggerFn } from "./types.ts";

/**
 * Events are the service's, not the caller's: published as the system, whoever caused them (the
 * caller's key granted the change; subscribers run as the system anyway).
 */
const publishRequest = (topic: string, data: unknown) => ({
  function_id: "publish",
  payload: { topic, data },
  auth: systemPrincipal,
});

/** Fire and forget: the change is done, and a subscriber failing must not undo or delay it. */
export function publishEvent(trigger: TriggerFn, topic: string, data: unknown): void {
  void trigger({ ...publishRequest(topic, data), action: { type: "void" } });
}

/**
 * Delivered before this resolves (e.g. an alert that must go out before the answer), yet a failing
 * publish never fails the caller: it is handed to `onError` (default: ignored).
 */
export async function publishEventAwaited(
  trigger: TriggerFn,
  topic: string,
  data: unknown,
  onError: (error: unknown) => void = () => undefined,
): Promise<void> {
  await trigger(publishRequest(topic, data)).catch(onError);
}
