import type { SessionStore } from "@hermes/core";
import { afterEach, describe } from "vitest";
import type { ContractBackend, ContractSuite } from "./harness.js";
import { backendShapesSuite } from "./suites/backend-shapes.js";
import { browsingContract } from "./suites/browsing.js";
import { concurrentWritesSuite } from "./suites/concurrent-writes.js";
import { conversationSuite } from "./suites/conversation.js";
import { listingContract } from "./suites/listing.js";
import { messagesSuite } from "./suites/messages.js";
import { portableSuite } from "./suites/portable.js";
import { readModelSuite } from "./suites/read-model.js";
import { readOnlySuite } from "./suites/read-only.js";
import { retentionSuite } from "./suites/retention.js";
import { searchSuite } from "./suites/search.js";
import { sessionsContract } from "./suites/sessions.js";
import { titlesContract } from "./suites/titles.js";

/** The backend under test. */
export interface ConformanceTarget<S extends SessionStore = SessionStore> {
  /** Shown in the test names, e.g. `sqlite`. */
  readonly name: string;
  /**
   * A fresh, empty store for one test (a new file, a new schema…). When `clock` is given, the
   * store must take every timestamp from it (Unix epoch seconds) instead of the wall clock.
   */
  open(options?: { clock?: () => number }): Promise<S>;
  /**
   * Disposes of a store the kit opened, after each test (default `store.close()`); drop a
   * schema or delete a file here.
   */
  close?(store: S): Promise<void>;
  /**
   * A read-only store on the same data as `store` (a store `open` returned, with data in it):
   * SQLite, the same file opened with `readOnly: true`. Optional: without it, the read-only
   * tests of the kit are skipped. Such stores are closed (`close()`) before the others.
   */
  openReadOnly?(store: S): Promise<S>;
}

/** Every contract suite, in the order it runs. Add new suites to this list. */
const SUITES: readonly ContractSuite[] = [
  backendShapesSuite,
  sessionsContract,
  titlesContract,
  listingContract,
  browsingContract,
  messagesSuite,
  conversationSuite,
  retentionSuite,
  searchSuite,
  portableSuite,
  readModelSuite,
  concurrentWritesSuite,
  readOnlySuite,
];

/**
 * Declares the `SessionStore` contract suites (vitest `describe`/`it`) against one backend:
 * the `backend` and `stats()` shapes, sessions, titles, listing, browsing pages, messages,
 * conversation shapes, retention, search, portable sessions, concurrent writes and read-only
 * access, the same assertions `@hermes/store` and `@hermes/postgres` pass. Call it at the top level of a test file.
 *
 * @example
 * // sqlite.conformance.test.ts
 * describeSessionStoreConformance({
 *   name: "sqlite",
 *   open: (o) => openSessionStore({ path: join(mkdtempSync(join(tmpdir(), "t-")), "state.db"), ...o }),
 * });
 */
export function describeSessionStoreConformance<S extends SessionStore>(target: ConformanceTarget<S>): void {
  describe(`SessionStore conformance [${target.name}]`, () => {
    const opened: S[] = [];
    const readers: S[] = [];
    afterEach(async () => {
      for (const store of readers.splice(0)) await store.close();
      for (const store of opened.splice(0)) {
        await (target.close === undefined ? store.close() : target.close(store));
      }
    });
    const openReadOnly = target.openReadOnly?.bind(target);
    const backend: ContractBackend = {
      name: target.name,
      async open(options) {
        const store = await target.open(options);
        opened.push(store);
        return store;
      },
      ...(openReadOnly === undefined
        ? {}
        : {
            async openReadOnly(store: SessionStore) {
              const reader = await openReadOnly(store as S);
              readers.push(reader);
              return reader;
            },
          }),
    };
    for (const suite of SUITES) suite(backend);
  });
}
