import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  HermesStoreError,
  isSupportedSqliteVersion,
  openSessionStore,
  resolveStatePath,
} from "@hermes/store";
import { describe, expect, it } from "vitest";
import { copyOfSample, tempDir } from "./helpers/temp-dir.js";

async function openError(path: string): Promise<HermesStoreError> {
  try {
    const store = await openSessionStore({ path });
    await store.close();
  } catch (error) {
    expect(error).toBeInstanceOf(HermesStoreError);
    return error as HermesStoreError;
  }
  throw new Error(`expected opening ${path} to fail`);
}

describe("damaged database files are refused at open and left as they were", () => {
  it("a zero-length file → STORE_CORRUPT, still zero bytes", async () => {
    const path = join(tempDir(), "state.db");
    writeFileSync(path, "");
    expect((await openError(path)).code).toBe("STORE_CORRUPT");
    expect(statSync(path).size).toBe(0);
  });

  it("a file that is not SQLite → STORE_CORRUPT, bytes unchanged", async () => {
    const path = join(tempDir(), "state.db");
    const junk = Buffer.from("this is a text file, not a database\n".repeat(200));
    writeFileSync(path, junk);
    expect((await openError(path)).code).toBe("STORE_CORRUPT");
    expect(readFileSync(path).equals(junk)).toBe(true);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("a truncated file → STORE_CORRUPT, bytes unchanged", async () => {
    const path = copyOfSample();
    truncateSync(path, Math.floor(statSync(path).size / 2));
    const before = readFileSync(path);
    expect((await openError(path)).code).toBe("STORE_CORRUPT");
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe("new files are private and appear whole", () => {
  it("under umask 022 a new directory is 0700 and state.db, -wal, -shm are 0600", async () => {
    const home = join(tempDir(), "nested", "hermes");
    const script = `
      import { openSessionStore } from "@hermes/store";
      process.umask(0o022);
      const store = await openSessionStore({ path: ${JSON.stringify(join(home, "state.db"))} });
      await store.createSession({ id: "s", source: "cli" });
      await store.appendMessage({ sessionId: "s", role: "user", content: "hi" });
      const fs = await import("node:fs");
      const modes = {};
      for (const f of ["state.db", "state.db-wal", "state.db-shm"]) {
        modes[f] = (fs.statSync(${JSON.stringify(home)} + "/" + f).mode & 0o777).toString(8);
      }
      modes.dir = (fs.statSync(${JSON.stringify(home)}).mode & 0o777).toString(8);
      console.log(JSON.stringify(modes));
      await store.close();
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: join(import.meta.dirname, ".."),
      encoding: "utf8",
    });
    expect(JSON.parse(out)).toEqual({
      "state.db": "600",
      "state.db-wal": "600",
      "state.db-shm": "600",
      dir: "700",
    });
  });

  it("an existing 0644 file is tightened to 0600", async () => {
    const path = copyOfSample();
    chmodSync(path, 0o644);
    const store = await openSessionStore({ path });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await store.close();
  });

  it("leaves no temporary file behind after creating a database", async () => {
    const dir = tempDir();
    const store = await openSessionStore({ path: join(dir, "state.db") });
    await store.close();
    expect(readdirSync(dir).filter((f) => f.includes(".creating-"))).toEqual([]);
  });
});

describe("unsafe paths are refused before anything is created", () => {
  for (const sidecar of ["state.db", "state.db-wal", "state.db-shm"]) {
    it(`${sidecar} planted as a symbolic link → UNSAFE_PATH, target untouched`, async () => {
      const dir = tempDir();
      const target = join(dir, "target.bin");
      writeFileSync(target, "precious");
      if (sidecar !== "state.db") {
        const store = await openSessionStore({ path: join(dir, "state.db") });
        await store.close();
      }
      symlinkSync(target, join(dir, sidecar));
      const error = await openError(join(dir, "state.db"));
      expect(error.code).toBe("UNSAFE_PATH");
      expect(error.message).toContain("symbolic link");
      expect(readFileSync(target, "utf8")).toBe("precious");
    });
  }

  it("HERMES_HOME with a NUL byte, a relative path or '..' is rejected", () => {
    for (const home of ["/tmp/a\0b", "relative/home", "/tmp/x/../../etc"]) {
      expect(() => resolveStatePath({ HERMES_HOME: home })).toThrowError(
        expect.objectContaining({ code: "UNSAFE_PATH" }),
      );
    }
  });

  it("HERMES_HOME is read at call time", async () => {
    const a = tempDir();
    const b = tempDir();
    expect(resolveStatePath({ HERMES_HOME: a })).toBe(join(a, "state.db"));
    expect(resolveStatePath({ HERMES_HOME: b })).toBe(join(b, "state.db"));
    const saved = process.env.HERMES_HOME;
    try {
      process.env.HERMES_HOME = a;
      const s1 = await openSessionStore();
      expect(s1.path).toBe(join(a, "state.db"));
      await s1.close();
      process.env.HERMES_HOME = b;
      const s2 = await openSessionStore();
      expect(s2.path).toBe(join(b, "state.db"));
      await s2.close();
    } finally {
      if (saved === undefined) delete process.env.HERMES_HOME;
      else process.env.HERMES_HOME = saved;
    }
  });

  it("a directory where the file should be → UNSAFE_PATH", async () => {
    const path = join(tempDir(), "state.db");
    mkdirSync(path);
    expect((await openError(path)).code).toBe("UNSAFE_PATH");
  });
});

describe("SQLite version policy", () => {
  it.each([
    ["3.51.2", false],
    ["3.51.3", true],
    ["3.53.2", true],
    ["3.45.0", false],
    ["4.0.0", true],
  ])("%s supported: %s", (version, ok) => {
    expect(isSupportedSqliteVersion(version)).toBe(ok);
  });
});
