// A caller's `clock` option (a function: it cannot cross to the writer thread) read from the
// writer thread. Timestamps are taken inside write transactions, as many as a write needs and
// in order (`manualClock` of the conformance kit ticks on every reading), so a value sent with
// each call would not do: the writer asks for each reading and waits for the answer in a
// SharedArrayBuffer. The caller's thread answers from its event loop, which it never blocks on
// the writer, so the wait ends; meanwhile the writer holds its transaction. For tests and
// simulations: with the default clock the writer reads its own wall clock and asks nothing.

/** Slots of the shared buffer: [0] state (Int32), [1] the reading (Float64 at byte 8). */
const BYTES = 16;
const ASKED = 0;
const ANSWERED = 1;
const FAILED = 2;
const ENDED = 3;
/** The writer checks that the caller's side still exists this often while it waits, in ms. */
const WAIT_SLICE_MS = 200;

/** The caller's side: answers the writer's requests with `clock()`. */
export class CallerClock {
  readonly buffer = new SharedArrayBuffer(BYTES);
  readonly #state = new Int32Array(this.buffer, 0, 1);
  readonly #value = new Float64Array(this.buffer, 8, 1);
  readonly #clock: () => number;
  #error = "";

  constructor(clock: () => number) {
    this.#clock = clock;
  }

  /** Answers one request of the writer (it waits meanwhile). */
  answer(): void {
    let state = ANSWERED;
    try {
      const value = this.#clock();
      this.#value[0] = typeof value === "number" ? value : Number.NaN;
    } catch (error) {
      state = FAILED;
      this.#error = error instanceof Error ? error.message : String(error);
    }
    Atomics.store(this.#state, 0, state);
    Atomics.notify(this.#state, 0);
  }

  /** Why the last reading failed (the caller's clock threw). */
  get lastError(): string {
    return this.#error;
  }

  /** Ends any wait of the writer (the store is closing or the thread is being ended). */
  end(): void {
    Atomics.store(this.#state, 0, ENDED);
    Atomics.notify(this.#state, 0);
  }
}

/**
 * The writer's side: a clock that asks the caller (`ask` posts the request) and waits for its
 * reading. Throws when the caller's clock threw or the caller's side ended.
 */
export function callerClockReader(buffer: SharedArrayBuffer, ask: () => void): () => number {
  const state = new Int32Array(buffer, 0, 1);
  const value = new Float64Array(buffer, 8, 1);
  return () => {
    if (Atomics.load(state, 0) === ENDED) throw new Error("the store is closing: its clock is gone");
    Atomics.store(state, 0, ASKED);
    ask();
    while (Atomics.load(state, 0) === ASKED) Atomics.wait(state, 0, ASKED, WAIT_SLICE_MS);
    const outcome = Atomics.load(state, 0);
    if (outcome === FAILED) throw new Error("the store's clock option threw");
    if (outcome === ENDED) throw new Error("the store is closing: its clock is gone");
    return value[0] as number;
  };
}
