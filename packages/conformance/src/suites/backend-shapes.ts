import type { BackendInfo, SessionStore, WriteCounters } from "@hermes/core";
import { describe, expect, it } from "vitest";
import { type ContractSuite, rejection } from "../harness.js";

/** Every write counter of `@hermes/core` (a missing or extra key fails to compile). */
const WRITE_COUNTERS: Record<keyof WriteCounters, true> = {
  writes: true,
  failedWrites: true,
  groupsCommitted: true,
  writesPerGroupMean: true,
  writesPerGroupMax: true,
  attempts: true,
  retries: true,
  busyErrors: true,
  waitedMs: true,
  busyTimeouts: true,
};
const COUNTERS = Object.keys(WRITE_COUNTERS) as Array<keyof WriteCounters>;

/** The documented fields of each `backend` kind, with a check of each value. */
const BACKEND_FIELDS: { [K in BackendInfo["kind"]]: Record<string, (v: unknown) => boolean> } = {
  sqlite: {
    path: (v) => typeof v === "string" && v !== "",
    sqliteVersion: (v) => typeof v === "string" && /^\d+\.\d+/.test(v),
  },
  postgres: {
    schema: (v) => typeof v === "string" && v !== "",
    serverVersion: (v) => typeof v === "string" && /^\d+/.test(v),
  },
  custom: { name: (v) => typeof v === "string" && v !== "" },
};

function counters(store: SessionStore): Record<keyof WriteCounters, number> {
  const s = store.stats();
  return Object.fromEntries(COUNTERS.map((key) => [key, s[key]])) as Record<keyof WriteCounters, number>;
}

/** `backend` and `stats()`: the discriminated shapes of `@hermes/core`, whatever the backend. */
export const backendShapesSuite: ContractSuite = (backend) => {
  describe(`backend and stats() [${backend.name}]`, () => {
    it("backend is one documented kind, with that kind's fields", async () => {
      const store = await backend.open();
      const info = store.backend;
      expect(Object.keys(BACKEND_FIELDS)).toContain(info.kind);
      for (const [field, valid] of Object.entries(BACKEND_FIELDS[info.kind])) {
        expect(valid((info as unknown as Record<string, unknown>)[field]), `backend.${field}`).toBe(true);
      }
      if (info.kind === "custom" && info.details !== undefined) expect(info.details).toBeTypeOf("object");
    });

    it("stats() is tagged with backend.kind and has every write counter, a number >= 0", async () => {
      const store = await backend.open();
      const stats = store.stats();
      expect(stats.backend).toBe(store.backend.kind);
      for (const key of COUNTERS) {
        expect(stats[key], key).toBeTypeOf("number");
        expect(Number.isFinite(stats[key]) && stats[key] >= 0, key).toBe(true);
      }
    });

    it("writes counts each write call once; a refused write counts in failedWrites, not writes", async () => {
      const store = await backend.open();
      const before = counters(store);
      await store.createSession({ id: "s1", source: "cli" });
      await store.appendMessage({ sessionId: "s1", role: "user", content: "one" });
      await store.appendMessages([
        { sessionId: "s1", role: "assistant", content: "two" },
        { sessionId: "s1", role: "user", content: "three" },
      ]);
      const after = counters(store);
      expect(after.writes - before.writes).toBe(3);
      expect(after.failedWrites).toBe(before.failedWrites);
      expect(after.groupsCommitted).toBeGreaterThanOrEqual(1);
      expect(after.groupsCommitted).toBeLessThanOrEqual(after.writes);
      expect(after.attempts).toBeGreaterThanOrEqual(after.groupsCommitted);
      expect(after.writesPerGroupMax).toBeGreaterThanOrEqual(1);

      await store.createSession({ id: "s2", source: "cli" });
      await store.setSessionTitle("s2", "Taken");
      const mid = counters(store);
      expect((await rejection(store.setSessionTitle("s1", "Taken"))).code).toBe("TITLE_CONFLICT");
      const end = counters(store);
      expect(end.writes).toBe(mid.writes);
      expect(end.failedWrites).toBe(mid.failedWrites + 1);
    });

    it("stats() is a snapshot: later writes leave an earlier result as it was", async () => {
      const store = await backend.open();
      const earlier = store.stats();
      const copy = { ...earlier };
      await store.createSession({ id: "s1", source: "cli" });
      expect(earlier).toEqual(copy);
      expect(store.stats().writes).toBe(earlier.writes + 1);
    });
  });
};
