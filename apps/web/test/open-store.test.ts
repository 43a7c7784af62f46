import { openSessionStore, type SessionStore } from "@hermes/store";
import { describe, expect, it } from "vitest";
import { openServedStore } from "../dist/open-store.js";
import { seededCopy } from "./helpers/seed-web-database.js";

// The store `hermes-sessions serve` opens has its read workers running before the server
// answers: no search of the first requests runs on the server's thread while a worker loads.

describe("the served store", () => {
  it.each([
    { allowWrites: false, readOnly: true },
    { allowWrites: true, readOnly: false },
  ])(
    "has every read worker ready once opened (allowWrites: $allowWrites)",
    async ({ allowWrites, readOnly }) => {
      const { path } = await seededCopy();
      // The agent has the file open, as while it runs: SQLite shares it (a read-only store then
      // reads through its workers; one of a file nobody has open reads a snapshot in-thread).
      const agent = await openSessionStore({ path, readers: 0 });
      const served = (await openServedStore({ db: path, allowWrites })) as SessionStore;
      try {
        expect(served.readOnly).toBe(readOnly);
        const pool = served.readPool!;
        expect(pool.size).toBeGreaterThanOrEqual(1);
        expect(pool.readyWorkers).toBe(pool.size);
        expect(pool.served).toBe(0);
        // A prefix search is never "cheap" (answered in-thread): a worker answers it.
        expect((await served.searchMessages("dock*", { limit: 5 })).length).toBeGreaterThan(0);
        expect(pool.served).toBe(1);
      } finally {
        await served.close();
        await agent.close();
      }
    },
  );
});
