// `backup`, `backup list`, `backup verify` and `restore` as real CLI processes on copies of
// the sample file: the round trip, rotation, a damaged archive, and a refused restore.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, cliInPty, copyOfSample, fingerprint } from "./helpers/cli.js";

describe("hermes-sessions backup / restore", () => {
  it("backs up beside the database, lists, verifies and restores", () => {
    const db = copyOfSample();
    const before = fingerprint(db);
    const made = cli(["--db", db, "backup", "--json"]);
    expect(made.code).toBe(0);
    const { archive, manifest } = JSON.parse(made.stdout) as {
      archive: string;
      manifest: { counts: { sessions: number; messages: number }; schemaVersion: number };
    };
    expect(fingerprint(db)).toBe(before);
    expect(dirname(archive)).toBe(join(dirname(db), "backups"));
    expect(manifest).toMatchObject({ counts: { sessions: 13, messages: 109 }, schemaVersion: 11 });
    expect((statSync(dirname(archive)).mode & 0o777).toString(8)).toBe("700");

    const list = cli(["--db", db, "backup", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/ARCHIVE +TAKEN +SCHEMA +SESSIONS +MESSAGES/);
    expect(list.stdout).toMatch(/v11 +13 +109 .*complete/);

    const verify = cli(["backup", "verify", archive]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^OK .*sha256 matches, integrity ok/);

    const restored = cli(["--db", db, "restore", archive]);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/Restored .* \(13 sessions, 109 messages\)/);
    expect(restored.stdout).toMatch(/kept as .*state\.db\.before-restore-/);
    const show = cli(["--db", db, "list", "--json", "--limit", "100", "--all"]);
    expect(JSON.parse(show.stdout)).toHaveLength(13);
  });

  it("--keep N leaves exactly N backups", () => {
    const db = copyOfSample();
    const to = join(dirname(db), "elsewhere");
    for (let i = 0; i < 4; i++) expect(cli(["--db", db, "backup", "--to", to, "--keep", "2"]).code).toBe(0);
    const listed = JSON.parse(cli(["--db", db, "backup", "list", "--to", to, "--json"]).stdout) as unknown[];
    expect(listed).toHaveLength(2);
    expect(readdirSync(to).filter((n) => n.endsWith(".db.gz"))).toHaveLength(2);
  });

  it("a damaged archive fails verify (exit 1) and restore refuses it, the database untouched", () => {
    const db = copyOfSample();
    const { archive } = JSON.parse(cli(["--db", db, "backup", "--json"]).stdout) as { archive: string };
    const bytes = readFileSync(archive);
    bytes[bytes.length - 12] = (bytes[bytes.length - 12] as number) ^ 0x55;
    writeFileSync(archive, bytes);
    const verify = cli(["backup", "verify", archive]);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toMatch(/failed verification/);
    const before = fingerprint(db);
    const restore = cli(["--db", db, "restore", archive]);
    expect(restore.code).toBe(1);
    expect(restore.stderr.trim().split("\n")).toHaveLength(1);
    expect(restore.stderr).toMatch(/\[ARCHIVE_INVALID\]$/m);
    expect(fingerprint(db)).toBe(before);
  });

  it("restore is refused, in one line naming the check, while another process has the file open", async () => {
    const db = copyOfSample();
    const { archive } = JSON.parse(cli(["--db", db, "backup", "--json"]).stdout) as { archive: string };
    const holder = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import Database from "better-sqlite3"; const db = new Database(${JSON.stringify(db)}); db.prepare("SELECT 1 FROM sessions").get(); console.log("open"); setInterval(() => {}, 1000);`,
      ],
      { cwd: dirname(new URL(import.meta.url).pathname), stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await new Promise<void>((resolve) => holder.stdout?.once("data", () => resolve()));
      const before = fingerprint(db);
      const restore = cli(["--db", db, "restore", archive]);
      expect(restore.code).toBe(1);
      expect(restore.stderr).toMatch(
        new RegExp(`pid ${holder.pid} .*found by .*Stop the Hermes agent.*\\[TARGET_IN_USE\\]`),
      );
      expect(fingerprint(db)).toBe(before);
      expect(readdirSync(dirname(db)).some((n) => n.includes("before-restore"))).toBe(false);
    } finally {
      holder.kill();
    }
  });

  it("draws a progress bar on a terminal, and none when piped", () => {
    const db = copyOfSample();
    const tty = cliInPty(["--db", db, "backup"]);
    expect(tty.code).toBe(0);
    expect(tty.stdout).toMatch(/backup \[[#-]+\] \d+% \d+\/\d+ (snapshot|check|compress)/);
    const piped = cli(["--db", db, "backup"]);
    expect(piped.stderr).toBe("");
    expect(piped.stdout).toMatch(/^Backed up /);
  });

  it("bad usage exits 2", () => {
    const db = copyOfSample();
    expect(cli(["--db", db, "backup", "--keep", "0"]).code).toBe(2);
    expect(cli(["--db", db, "backup", "verify"]).code).toBe(2);
    expect(cli(["--db", db, "restore"]).code).toBe(2);
    expect(existsSync(join(dirname(db), "backups"))).toBe(false);
  });
});
