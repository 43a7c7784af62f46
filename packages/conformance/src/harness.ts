import type { HermesStoreError, SessionStore } from "@hermes/core";

/**
 * What a contract suite receives: the backend's name and a way to open a fresh, empty store.
 * Stores opened through it are closed after each test by {@link describeSessionStoreConformance}.
 */
export interface ContractBackend {
  readonly name: string;
  /** A fresh, empty store. `clock` replaces the wall clock (Unix epoch seconds). */
  open(options?: { clock?: () => number }): Promise<SessionStore>;
}

/** A contract suite: a function of the backend, calling `describe`/`it` inside. */
export type ContractSuite = (backend: ContractBackend) => void;

/** A clock the test moves by hand. */
export interface ManualClock {
  (): number;
  /** Moves the clock forward by `seconds`. */
  advance(seconds: number): void;
  set(epochSeconds: number): void;
}

/**
 * A manual clock starting at `start` that also ticks 1 ms per reading, so timestamps differ.
 *
 * @example
 * const clock = manualClock();
 * const store = await open({ clock });
 * clock.advance(86_400); // a day later
 */
export function manualClock(start = 1_767_225_600): ManualClock {
  let now = start;
  const clock = (() => {
    now += 0.001;
    return now;
  }) as ManualClock;
  clock.advance = (seconds) => {
    now += seconds;
  };
  clock.set = (epochSeconds) => {
    now = epochSeconds;
  };
  return clock;
}

/** The error a call rejects with; fails the test when it resolves instead. */
export async function rejection(p: Promise<unknown>): Promise<HermesStoreError> {
  try {
    await p;
  } catch (error) {
    return error as HermesStoreError;
  }
  throw new Error("expected the call to reject");
}
