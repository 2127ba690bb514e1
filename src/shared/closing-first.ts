/**
 * `events` whose end, when its consumer stops early (an HTTP client hung up and its stream is
 * destroyed), first runs `close`: an async generator waiting on its next item (a provider's next event,
 * a turn's next step) takes a `return` only once that item came, and what stalls never sends it. `close`
 * ends the wait (aborts the work), and the generator's own `finally` then runs.
 */
export function closingFirst<T>(events: AsyncGenerator<T>, close: () => void): AsyncGenerator<T> {
  const closing: AsyncGenerator<T> = {
    next: (...args) => events.next(...args),
    return: (value) => {
      close();
      return events.return(value);
    },
    throw: (error) => {
      close();
      return events.return(undefined as T).then(() => Promise.reject(error));
    },
    [Symbol.asyncIterator]: () => closing,
    [Symbol.asyncDispose]: async () => {
      close();
      await events.return(undefined as T);
    },
  };
  return closing;
}
