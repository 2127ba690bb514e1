/**
 * A value now or later: synchronous backends answer without the cost of a promise per call.
 * (Never export a function named `then` from a module: its namespace would become a thenable.)
 */
export type MaybePromise<T> = T | Promise<T>;

export function andThen<T, R>(value: MaybePromise<T>, next: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
