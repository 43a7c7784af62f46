import { join } from "node:path";
import { openSessionStore, type SessionStore } from "@hermes/store";
import { afterEach, describe } from "vitest";
import { browsingContract } from "./contract/browsing.js";
import { concurrentWritesSuite } from "./contract/concurrent-writes.js";
import { conversationSuite } from "./contract/conversation.js";
import type { ContractBackend, ContractSuite } from "./contract/harness.js";
import { listingContract } from "./contract/listing.js";
import { messagesSuite } from "./contract/messages.js";
import { portableSuite } from "./contract/portable.js";
import { retentionSuite } from "./contract/retention.js";
import { searchSuite } from "./contract/search.js";
import { sessionsContract } from "./contract/sessions.js";
import { titlesContract } from "./contract/titles.js";
import { tempDir } from "./helpers/temp-dir.js";

// Every contract suite, run against the SQLite backend. Add new suites to this list.
const suites: ContractSuite[] = [
  sessionsContract,
  titlesContract,
  listingContract,
  browsingContract,
  messagesSuite,
  conversationSuite,
  retentionSuite,
  searchSuite,
  portableSuite,
  concurrentWritesSuite,
];

const opened: SessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

const sqliteBackend: ContractBackend = {
  name: "sqlite",
  async open(options) {
    const store = await openSessionStore({ path: join(tempDir(), "state.db"), ...options });
    opened.push(store);
    return store;
  },
};

describe("SessionStore contract (SQLite)", () => {
  for (const suite of suites) suite(sqliteBackend);
});
