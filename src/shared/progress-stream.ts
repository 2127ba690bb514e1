import { closingFirst } from "./closing-first.ts";

/** What a call reporting progress yields: its events in order, then its result or its failure. */
export type ProgressItem<T> =
  | { kind: "event"; event: unknown }
  | { kind: "result"; result: T }
  | { kind: "error"; error: unknown };

/**
 * Starts a call that reports progress (engine.trigger with `onProgress`) and answers once it has told
 * something or ended: a call that fails before its first event rejects here, so its refusal (402, 409,
 * 429…) can still be a real HTTP status; after that, everything comes through the stream. Leaving the
 * stream early (the client went away) aborts the call through the signal given to `start`.
 */
export async function openProgress<T>(
  start: (onProgress: (event: unknown) => void, signal: AbortSignal) => Promise<T>,
): Promise<AsyncGenerator<ProgressItem<T>>> {
  const queue: ProgressItem<T>[] = [];
  const controller = new AbortController();
  let ended = false;
  let wake: (() => void) | undefined;
  const push = (item: ProgressItem<T>) => {
    queue.push(item);
    wake?.();
    wake = undefined;
  };
  const arrival = () =>
    new Promise<void>((resolve) => {
      if (queue.length > 0) resolve();
      else wake = resolve;
    });
  start((event) => push({ kind: "event", event }), controller.signal).then(
    (result) => {
      ended = true;
      push({ kind: "result", result });
    },
    (error: unknown) => {
      ended = true;
      push({ kind: "error", error });
    },
  );
  await arrival();
  const first = queue[0] as ProgressItem<T>;
  if (first.kind === "error") throw first.error;
  const leave = () => {
    if (!ended) controller.abort(new Error("The client went away"));
  };
  // A client that leaves while the work is between events (a model thinking) stops it at once.
  return closingFirst(
    (async function* () {
      try {
        for (;;) {
          while (queue.length > 0) {
            const item = queue.shift() as ProgressItem<T>;
            yield item;
            if (item.kind !== "event") return;
          }
          await arrival();
        }
      } finally {
        leave();
      }
    })(),
    leave,
  );
}
