/**
 * `work` run at most once, its promise shared by every caller (a one-time backfill that readers await);
 * a run that fails is forgotten, so the next call tries again.
 */
export function onceUntilDone(work: () => Promise<void>): () => Promise<void> {
  let pending: Promise<void> | undefined;
  return () => {
    pending ??= work().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
