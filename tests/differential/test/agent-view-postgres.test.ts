import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { openPostgresSessionStore } from "@hermes/postgres";
import { describe, expect, inject, it, onTestFinished } from "vitest";
import { cliMain } from "./helpers/cli-main.js";

// A newer agent's file migrated to PostgreSQL keeps its flags there, and the counting and
// pruning commands treat them as on the file: stats counts what list shows, prune never takes
// a pinned session and takes archived or hidden ones only when asked.
const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);
const pgUrl = (schema: string) => `${url}${url.includes("?") ? "&" : "?"}schema=${schema}`;
const run = promisify(execFile);
const CLI = cliMain();
const cli = async (...args: string[]) => (await run(process.execPath, [CLI, ...args])).stdout;

const V31 = new URL("../../../packages/store/test/fixtures/reference/hermes-v31-sample.db", import.meta.url)
  .pathname;
const CLI001 = "20260101_090000_cli001"; // pinned, ended
const CLI002 = "20260101_093000_cli002"; // pinned, ended
const CLI003 = "20260104_100000_cli003"; // ended, not flagged
const ARCHIVED = "20260106_000000_homeassistant";
const HIDDEN = "20260106_000000_matrix";

describe("a v31 file migrated to PostgreSQL: stats and prune", { timeout: 180_000 }, () => {
  it("stats counts the listed sessions; prune never takes a pinned one, archived/hidden only when asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-agent-view-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "state.db");
    copyFileSync(V31, file);
    chmodSync(file, 0o600);
    const schema = `a_${randomBytes(6).toString("hex")}`;
    const db = pgUrl(schema);
    await cli("migrate-to-postgres", "--from", file, "--to", db, "--json");
    const stats = async (...flags: string[]) =>
      (JSON.parse(await cli("--db", db, "stats", "--json", ...flags)) as { sessions: number }).sessions;
    expect(await stats()).toBe(12);
    expect(await stats("--include-archived", "--include-hidden")).toBe(15);

    // The archived and the hidden session end (in the fixture they are open).
    const store = await openPostgresSessionStore({ connectionString: url, schema });
    onTestFinished(() => store.close());
    await store.endSession(ARCHIVED, "user_exit");
    await store.endSession(HIDDEN, "user_exit");
    const dryRun = async (...flags: string[]) =>
      (
        JSON.parse(await cli("--db", db, "prune", "--older-than", "90", "--dry-run", "--json", ...flags)) as {
          sessions: Array<{ id: string }>;
        }
      ).sessions
        .map((s) => s.id)
        .sort();
    expect(await dryRun()).toEqual([CLI003]);
    expect(await dryRun("--include-archived", "--include-hidden")).toEqual([CLI003, ARCHIVED, HIDDEN]);

    // The library itself: pinned sessions survive every prune.
    expect(await store.pruneSessions({ olderThanDays: 90 })).toBe(1);
    expect(await store.getSession(CLI003)).toBeNull();
    expect(await store.getSession(ARCHIVED)).not.toBeNull();
    expect(await store.pruneSessions({ olderThanDays: 90, includeHidden: true })).toBe(1);
    expect(await store.getSession(HIDDEN)).toBeNull();
    expect(await store.pruneSessions({ olderThanDays: 0, includeArchived: true, includeHidden: true })).toBe(
      1,
    );
    expect(await store.getSession(ARCHIVED)).toBeNull();
    expect(await store.getSession(CLI001)).toMatchObject({ pinned: true });
    expect(await store.getSession(CLI002)).toMatchObject({ pinned: true });
  });
});
