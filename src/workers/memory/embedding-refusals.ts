/**
 * Entries the provider will not embed. A request whose input the provider rejects (400, 413, 422: a
 * content policy, characters it does not take) fails as a whole, and OpenAI's answer does not say which
 * input it was (its message names none; `param` is `input` at most, and embed() may have split the batch
 * across requests besides). Sent again, the batch fails again: one such entry would hold back every
 * later entry of its agent for good. So such a failure is taken apart here:
 *
 * - first a probe (one short text no provider refuses) tells a refusal of the inputs from one of the
 *   request itself (a model or an option the provider does not take answers 400 for any input): if the
 *   probe fails too, nothing is marked and the failure goes to the queue's backoff as any other;
 * - then the batch is halved until each rejected input stands alone (a half that fails while its
 *   sibling went through is known bad without being sent: one request saved at each level), at most
 *   MAX_SPLIT_CALLS requests in a flush; what is not settled by then waits for the next flush;
 * - should every request after the probe have failed, a second probe checks that the provider did not
 *   turn to refusing any request meanwhile before anything is marked.
 *
 * Failures of the provider (401/403, 404, 429, 5xx, timeouts, the network) are never taken apart.
 */

/** Answers that blame what was sent rather than the provider's state. */
const INPUT_STATUSES = new Set([400, 413, 422]);

/** Requests one flush may spend finding rejected inputs (a batch of 64 with one bad input takes ~7). */
export const MAX_SPLIT_CALLS = 16;

/** What is sent to tell a rejected input from a rejected request. */
export const PROBE_TEXT = "memory";

/** Whether the failure is the provider rejecting the request's content (an HTTP status, anywhere in the causes). */
export function isInputRejection(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 6 && current; depth++) {
    const { statusCode, cause, lastError } = current as {
      statusCode?: unknown;
      cause?: unknown;
      lastError?: unknown;
    };
    if (typeof statusCode === "number") return INPUT_STATUSES.has(statusCode);
    current = lastError ?? cause;
  }
  return false;
}

export interface Settled<T> {
  /** The items embedded, each with its vector. */
  embedded: Array<{ item: T; vector: Float32Array }>;
  /** The items the provider refused on their own, the probe having gone through. */
  refused: T[];
  /** Items not settled: the request budget ran out, or the provider failed meanwhile. */
  left: T[];
  /** A failure of the provider met on the way (thrown by the caller once what was embedded is kept). */
  failure?: unknown;
  /** The provider's rejection that started the taking apart (why the refused were refused). */
  rejection?: unknown;
}

/**
 * Embeds `items` (one request), taking apart a rejection as the module says. `embed` sends one request
 * and answers one vector per text; a failure other than a rejection of the first request is thrown.
 */
export async function embedSettling<T>(
  items: readonly T[],
  textOf: (item: T) => string,
  embed: (texts: string[]) => Promise<Float32Array[]>,
): Promise<Settled<T>> {
  const out: Settled<T> = { embedded: [], refused: [], left: [] };
  const send = async (group: readonly T[]) => {
    const vectors = await embed(group.map(textOf));
    group.forEach((item, i) => {
      out.embedded.push({ item, vector: vectors[i] as Float32Array });
    });
  };
  try {
    await send(items);
    return out;
  } catch (error) {
    if (!isInputRejection(error)) throw error;
    out.rejection = error;
    // The request itself refused (the probe too): a failure like any other, nothing is marked.
    const probe = await embed([PROBE_TEXT]).then(
      () => null,
      (probeError: unknown) => probeError,
    );
    if (probe !== null) throw isInputRejection(probe) ? error : probe;
  }
  let calls = 2;
  /** Settles a group known to hold a rejected input (`bad`) or not known to; true: all of it embedded. */
  const settle = async (group: readonly T[], bad: boolean): Promise<boolean> => {
    // Out of requests (a known-bad single input needs none) or the provider failed: the next flush goes on.
    if (out.failure !== undefined || (!(bad && group.length === 1) && calls >= MAX_SPLIT_CALLS)) {
      out.left.push(...group);
      return false;
    }
    if (!bad) {
      calls++;
      try {
        await send(group);
        return true;
      } catch (error) {
        if (!isInputRejection(error)) {
          out.failure = error;
          out.left.push(...group);
          return false;
        }
      }
    }
    if (group.length === 1) {
      out.refused.push(group[0] as T);
      return false;
    }
    const half = Math.ceil(group.length / 2);
    const first = await settle(group.slice(0, half), false);
    // The first half went through: the rejected input is in the second, which need not be sent whole.
    await settle(group.slice(half), first);
    return false;
  };
  await settle(items, true);
  // Every request after the probe failed: the provider may have turned to refusing any request since.
  // One more probe decides, or the entries would be marked for what was not theirs.
  if (out.refused.length > 0 && out.embedded.length === 0 && calls > 2) {
    const again = await embed([PROBE_TEXT]).then(
      () => null,
      (probeError: unknown) => probeError,
    );
    if (again !== null) {
      out.left.push(...out.refused.splice(0));
      out.failure ??= again;
    }
  }
  return out;
}
