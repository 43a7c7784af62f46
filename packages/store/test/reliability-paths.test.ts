import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HermesStoreError, openSessionStore } from "@hermes/store";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers/temp-dir.js";

// Issue 9, scenarios 4 and 6, the parts not covered by reliability-files.test.ts: an existing
// 0644 file is tightened while another store of the same process holds it open, without
// dropping that store's locks (closing any descriptor of a SQLite file drops every POSIX lock
// the process holds on it); and a bad HERMES_HOME or path creates nothing before it is refused.

const STORE_DIR = join(import.meta.dirname, "..");

/** Runs an ES module script with `node` (from the store package, so its imports resolve). */
function node(script: string, o: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: o.cwd ?? STORE_DIR,
    env: o.env ?? process.env,
    encoding: "utf8",
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`child failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * What another process can do to the file right now, with no patience (busy timeout 0): reset
 * the WAL (impossible while any connection reads from it) and leave WAL mode (impossible while
 * any connection has the database open).
 */
function probeLocks(path: string): { checkpointBusy: number; walBytesAfter: number; journalMode: string } {
  const out = node(`
    import Database from "better-sqlite3";
    import { existsSync, statSync } from "node:fs";
    const db = new Database(${JSON.stringify(path)}, { timeout: 0 });
    const [cp] = db.pragma("wal_checkpoint(TRUNCATE)");
    let journalMode;
    try { journalMode = db.pragma("journal_mode = DELETE", { simple: true }); }
    catch (e) { journalMode = e.code; }
    db.close();
    console.log(JSON.stringify({ checkpointBusy: cp.busy, walBytesAfter: existsSync(${JSON.stringify(`${path}-wal`)}) ? statSync(${JSON.stringify(`${path}-wal`)}).size : -1, journalMode }));
  `);
  return JSON.parse(out) as { checkpointBusy: number; walBytesAfter: number; journalMode: string };
}

const mode = (p: string) => statSync(p).mode & 0o777;

describe("an existing 0644 file is tightened under a live connection (issue 9, scenario 4)", () => {
  it("a second store of the same process tightens it; the first keeps working and its locks hold", async () => {
    const path = join(tempDir(), "state.db");
    const first = await openSessionStore({ path, checkpointEvery: 0 });
    for (let s = 0; s < 3; s++) {
      await first.createSession({ id: `s${s}`, source: "cli" });
      for (let i = 0; i < 5; i++)
        await first.appendMessage({ sessionId: `s${s}`, role: "user", content: `m${i}` });
    }
    // As an older tool (or a restore from backup) would have left them.
    for (const f of [path, `${path}-wal`, `${path}-shm`]) chmodSync(f, 0o644);
    expect(mode(path)).toBe(0o644);

    // The first store reads from one snapshot (a read lock on the WAL) while the second opens.
    const exporting = first.exportStream()[Symbol.asyncIterator]();
    expect((await exporting.next()).value?.id).toBe("s0");

    const second = await openSessionStore({ path });
    for (const f of [path, `${path}-wal`, `${path}-shm`]) expect(mode(f)).toBe(0o600);
    await second.appendMessage({ sessionId: "s1", role: "user", content: "from the second store" });
    await second.close();

    // Another process still meets the first store's locks: the WAL cannot be reset under its
    // reader, and the file cannot leave WAL mode while it is open.
    const during = probeLocks(path);
    expect(during.checkpointBusy).toBe(1);
    expect(during.walBytesAfter).toBeGreaterThan(0);
    expect(during.journalMode).not.toBe("delete");

    // The first store's snapshot is intact (it began before the second store's write).
    const exported = [(await exporting.next()).value, (await exporting.next()).value];
    expect(exported.map((s) => [s?.id, s?.messages.length])).toEqual([
      ["s1", 5],
      ["s2", 5],
    ]);
    expect((await exporting.next()).done).toBe(true);

    // And it keeps writing and reading normally.
    await first.appendMessage({ sessionId: "s2", role: "user", content: "from the first store" });
    expect((await first.getMessages("s1")).map((m) => m.content)).toContain("from the second store");
    expect(await first.messageCount()).toBe(17);
    const idle = probeLocks(path);
    expect(idle.journalMode).not.toBe("delete"); // still open: still locked
    await first.close();
    for (const f of [path].filter(existsSync)) expect(mode(f)).toBe(0o600);
  });
});

/** Every entry under `dir`, recursively (relative paths). */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

describe("a bad HERMES_HOME or path creates nothing (issue 9, scenario 6)", () => {
  const HOMES = [
    { home: "relative/hermes", why: "relative" },
    { home: "./hermes", why: "relative with ./" },
    { home: "hermes", why: "a bare name" },
    { home: "~hermes/x", why: "~user form (not expanded: relative)" },
    { home: "{tmp}/a/../b", why: "'..' segment" },
    { home: "{tmp}/a/..", why: "trailing '..'" },
    { home: "~/../escape", why: "'..' after ~" },
  ];

  it.each(HOMES)("HERMES_HOME=$home ($why) → UNSAFE_PATH, no file or directory anywhere", ({ home }) => {
    const cwd = tempDir();
    const userHome = tempDir();
    const tmp = tempDir();
    const value = home.replace("{tmp}", tmp);
    const out = node(
      `
      import { openSessionStore } from "@hermes/store";
      try { await openSessionStore(); console.log("opened"); }
      catch (e) { console.log(e.code); }
      `,
      { cwd: STORE_DIR, env: { ...process.env, HOME: userHome, HERMES_HOME: value, PWD: cwd } },
    );
    expect(out).toBe("UNSAFE_PATH");
    // Nothing in the home directory, the temp tree, or the package directory it ran from.
    expect(tree(userHome)).toEqual([]);
    expect(tree(tmp)).toEqual([]);
    expect(existsSync(join(STORE_DIR, "relative"))).toBe(false);
    expect(existsSync(join(STORE_DIR, "hermes"))).toBe(false);
    expect(existsSync(join(STORE_DIR, "~hermes"))).toBe(false);
  });

  it("relative HERMES_HOME run from a scratch working directory creates nothing there", () => {
    const cwd = tempDir();
    const script = join(cwd, "..", `${cwd.split("/").at(-1)}-open.mjs`);
    // The script lives outside `cwd`, so `cwd` must stay empty; it imports the built store.
    writeFileSync(
      script,
      `import { openSessionStore } from ${JSON.stringify(join(STORE_DIR, "dist", "index.js"))};
       try { await openSessionStore(); console.log("opened"); } catch (e) { console.log(e.code); }`,
    );
    try {
      const r = spawnSync(process.execPath, [script], {
        cwd,
        env: { ...process.env, HERMES_HOME: "state-home" },
        encoding: "utf8",
      });
      expect(r.stdout.trim()).toBe("UNSAFE_PATH");
      expect(tree(cwd)).toEqual([]);
    } finally {
      spawnSync("rm", ["-f", script]);
    }
  });

  const PATHS: Array<{ path: (dir: string) => unknown; code: string; why: string }> = [
    { path: (d) => join(d, "new", "sub\0dir", "state.db"), code: "UNSAFE_PATH", why: "NUL in a directory" },
    { path: (d) => join(d, "new", "state.db\0.txt"), code: "UNSAFE_PATH", why: "NUL in the file name" },
    { path: () => "", code: "INVALID_ARGUMENT", why: "empty" },
    { path: () => 42, code: "INVALID_ARGUMENT", why: "a number" },
    { path: () => ({ toString: () => "/tmp/x" }), code: "INVALID_ARGUMENT", why: "an object" },
    { path: () => ["state.db"], code: "INVALID_ARGUMENT", why: "an array" },
  ];

  it.each(PATHS)("path: $why → $code, nothing created", async ({ path, code }) => {
    const dir = tempDir();
    let caught: unknown;
    try {
      await openSessionStore({ path: path(dir) as string });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(HermesStoreError);
    expect((caught as HermesStoreError).code).toBe(code);
    expect(tree(dir)).toEqual([]);
  });

  it("a path whose parent is a regular file, or that is a directory, fails typed and creates nothing", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "file"), "x");
    mkdirSync(join(dir, "adir"));
    const before = tree(dir);
    for (const path of [join(dir, "file", "state.db"), join(dir, "adir")]) {
      let caught: unknown;
      try {
        await openSessionStore({ path });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(HermesStoreError);
      expect((caught as HermesStoreError).code).toBe("UNSAFE_PATH");
    }
    expect(tree(dir)).toEqual(before);
  });
});
