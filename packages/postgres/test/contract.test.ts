import { randomBytes } from "node:crypto";
import { openPostgresSessionStore, type PostgresSessionStore } from "@hermes/postgres";
import { afterEach, describe, inject } from "vitest";
import { browsingContract } from "../../store/test/contract/browsing.js";
import { concurrentWritesSuite } from "../../store/test/contract/concurrent-writes.js";
import { conversationSuite } from "../../store/test/contract/conversation.js";
import type { ContractBackend, ContractSuite } from "../../store/test/contract/harness.js";
import { listingContract } from "../../store/test/contract/listing.js";
import { messagesSuite } from "../../store/test/contract/messages.js";
import { portableSuite } from "../../store/test/contract/portable.js";
import { retentionSuite } from "../../store/test/contract/retention.js";
import { searchSuite } from "../../store/test/contract/search.js";
import { sessionsContract } from "../../store/test/contract/sessions.js";
import { titlesContract } from "../../store/test/contract/titles.js";

// The store's contract suites, unchanged, against a real PostgreSQL server (one fresh schema
// per store). `vacuum` runs PostgreSQL's VACUUM (ANALYZE): the suite's expectations (rows kept,
// writes continue) hold for it as they do for SQLite's.
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

const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);

const opened: PostgresSessionStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

const postgresBackend: ContractBackend = {
  name: "postgres",
  async open(options) {
    const store = await openPostgresSessionStore({
      connectionString: url,
      schema: `t_${randomBytes(6).toString("hex")}`,
      maxConnections: 4,
      ...options,
    });
    opened.push(store);
    return store;
  },
};

describe("SessionStore contract (PostgreSQL)", () => {
  for (const suite of suites) suite(postgresBackend);
});
