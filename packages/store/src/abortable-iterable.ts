import { throwIfAborted } from "@hermes/core";

/** `source`, checking `signal` before each item: an abort rejects the next step with `ABORTED`. */
export async function* abortable<T>(
  source: AsyncIterable<T>,
  signal: AbortSignal | undefined,
): AsyncGenerator<T, void, undefined> {
  throwIfAborted(signal);
  if (signal === undefined) {
    yield* source;
    return;
  }
  for await (const item of source) {
    throwIfAborted(signal);
    yield item;
  }
}
