import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers/temp-dir.js";

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../../..");
const PACKAGES = ["core", "schema", "search", "store", "conformance", "cli"] as const;
/** The vitest of the workspace: the consumer installs the same version, as the kit's peer. */
const VITEST_VERSION = (
  JSON.parse(readFileSync(join(REPO, "node_modules", "vitest", "package.json"), "utf8")) as {
    version: string;
  }
).version;
const bin = (name: string) => join(REPO, "node_modules", ".bin", name);

/**
 * The environment of a user's shell: without the npm_config_* and pnpm variables that
 * `pnpm test` exports, which npm would otherwise warn about on stderr.
 */
const USER_ENV = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(npm_|pnpm_)/i.test(key)),
);

/** Runs a command; on failure the error carries its output, so a failing step says why. */
async function sh(cmd: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: USER_ENV });
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${cmd} ${args.join(" ")} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`,
    );
  }
}

const CONSUMER_SCRIPT = `
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openSessionStore } from "@hermes/store";
import { SCHEMA_VERSION } from "@hermes/schema";
import { sanitizeFts5Query } from "@hermes/search";

const path = join(process.argv[2], "state.db");
const store = await openSessionStore({ path });
await store.createSession({ id: "s1", source: "cli", model: "hermes-4" });
const id = await store.appendMessage({ sessionId: "s1", role: "user", content: "hello from a tarball" });
await store.appendMessage({ sessionId: "s1", role: "assistant", content: "记忆断裂的问题复现了" });
const messages = await store.getMessages("s1");
const english = (await store.searchMessages("tarball")).map((h) => [h.id, h.snippet]);
const cjk = (await store.searchMessages("记忆")).map((h) => h.id);
await store.close();
console.log(JSON.stringify({
  storeFrom: realpathSync(fileURLToPath(import.meta.resolve("@hermes/store"))),
  schemaVersion: SCHEMA_VERSION,
  sanitized: sanitizeFts5Query("fix chat-send bug"),
  id,
  messages: messages.map((m) => ({ session_id: m.session_id, role: m.role, content: m.content })),
  english,
  cjk,
}));
`;

// The same calls, type-checked against the installed declaration files (strict, as a consumer
// would compile them).
const CONSUMER_TYPES = `
import { type MessageRow, openSessionStore, type SessionStore } from "@hermes/store";
import type { SessionStore as CoreSessionStore } from "@hermes/core";
import type { SessionRow } from "@hermes/schema";
import { containsCjk } from "@hermes/search";

const store: SessionStore = await openSessionStore({ path: "/tmp/x/state.db" });
const rows: MessageRow[] = await store.getMessages("s1");
const session: SessionRow | null = await store.getSession("s1");
const cjk: boolean = containsCjk("桂林");
// The SQLite class satisfies the backend-neutral interface, with its own backend and stats shapes.
const contract: CoreSessionStore = store;
const walBytes: number = store.stats().walBytes;
const path: string = store.backend.path;
export { rows, session, cjk, contract, walBytes, path };
`;

// The conformance kit, as a third party runs it (its README): the contract suites against the
// SQLite store, installed from the tarballs, under the consumer's own vitest.
const CONFORMANCE_TEST = `
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeSessionStoreConformance } from "@hermes/conformance";
import { openSessionStore } from "@hermes/store";

describeSessionStoreConformance({
  name: "sqlite",
  open: (options) =>
    openSessionStore({ path: join(mkdtempSync(join(tmpdir(), "conformance-")), "state.db"), ...options }),
  openReadOnly: (store) => openSessionStore({ path: store.path, readOnly: true }),
});
`;

describe("the published packages", () => {
  it(
    "pack (pnpm), pass publint --strict and attw, install with npm outside the workspace, and work there",
    async () => {
      const work = realpathSync(tempDir("hermes-pack-"));
      expect(work.startsWith(REPO)).toBe(false);
      const tarballs = join(work, "tarballs");
      // One pnpm call packs them all (pnpm rewrites the workspace:^ dependencies to real
      // version ranges in the tarballs).
      await sh(
        "npx",
        [
          "-y",
          "pnpm@10",
          "--recursive",
          ...PACKAGES.flatMap((name) => ["--filter", `@hermes/${name}`]),
          "pack",
          "--pack-destination",
          tarballs,
        ],
        REPO,
      );
      const files = readdirSync(tarballs).sort();
      expect(files).toEqual([
        "hermes-cli-0.1.0.tgz",
        "hermes-conformance-0.1.0.tgz",
        "hermes-core-0.1.0.tgz",
        "hermes-schema-0.1.0.tgz",
        "hermes-search-0.1.0.tgz",
        "hermes-store-0.1.0.tgz",
      ]);

      for (const file of files) {
        const tgz = join(tarballs, file);
        await sh(bin("publint"), ["run", tgz, "--strict"], work);
        // ESM only (Node >= 20.19 can also require() it): CommonJS resolution is not a target.
        // The CLI has a bin and no module entry point: nothing for attw to resolve.
        if (file !== "hermes-cli-0.1.0.tgz") await sh(bin("attw"), [tgz, "--profile", "esm-only"], work);
        const listing = await sh("tar", ["-tzf", tgz], work);
        // Only the build output and package metadata are published: no sources, no tests.
        const entries = listing.trim().split("\n");
        for (const entry of entries) {
          expect(entry, file).toMatch(
            /^package\/(dist\/.+\.(js|d\.ts|js\.map|d\.ts\.map)|package\.json|README\.md|LICENSE)$/,
          );
        }
        expect(entries, file).toContain("package/LICENSE");
        const manifest = JSON.parse(await sh("tar", ["-xzOf", tgz, "package/package.json"], work)) as Record<
          string,
          unknown
        >;
        expect(JSON.stringify(manifest), file).not.toContain("workspace:");
        expect(manifest.license, file).toBe("MIT");
      }

      const app = join(work, "app");
      await sh("mkdir", ["-p", app], work);
      writeFileSync(
        join(app, "package.json"),
        JSON.stringify({
          name: "hermes-pack-consumer",
          private: true,
          type: "module",
          dependencies: Object.fromEntries(
            PACKAGES.map((name) => [`@hermes/${name}`, `file:../tarballs/hermes-${name}-0.1.0.tgz`]),
          ),
          devDependencies: { vitest: VITEST_VERSION },
        }),
      );
      // One install for everything: the five tarballs, their dependencies and vitest.
      await sh("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], app);
      writeFileSync(join(app, "consumer.mjs"), CONSUMER_SCRIPT);
      writeFileSync(join(app, "consumer.ts"), CONSUMER_TYPES);
      writeFileSync(join(app, "conformance.test.ts"), CONFORMANCE_TEST);

      const dataDir = join(work, "data");
      const out = JSON.parse(await sh(process.execPath, ["consumer.mjs", dataDir], app));
      expect(out.storeFrom).toBe(join(app, "node_modules/@hermes/store/dist/index.js"));
      expect(out).toMatchObject({
        schemaVersion: 11,
        sanitized: 'fix "chat-send" bug',
        id: 1,
        messages: [
          { session_id: "s1", role: "user", content: "hello from a tarball" },
          { session_id: "s1", role: "assistant", content: "记忆断裂的问题复现了" },
        ],
        english: [[1, "hello from a >>>tarball<<<"]],
        cjk: [2],
      });

      // The installed CLI, as a user runs it, on the same file; the optional PostgreSQL peer
      // (and so pg) is not installed, and asking for it says what to install.
      const npx = (...args: string[]) => sh("npx", ["--no-install", "hermes-sessions", ...args], app);
      expect(await npx("--help")).toMatch(/^Usage: hermes-sessions \[options\] \[command\]/);
      expect(await npx("--version")).toBe("0.1.0\n");
      const hits = JSON.parse(
        await npx("--db", join(dataDir, "state.db"), "search", "记忆", "--json"),
      ) as Array<{
        id: number;
      }>;
      expect(hits.map((h) => h.id)).toEqual([2]);
      expect(existsSync(join(app, "node_modules", "pg"))).toBe(false);
      expect(existsSync(join(app, "node_modules", "@hermes", "postgres"))).toBe(false);
      const pg = await run(
        "npx",
        ["--no-install", "hermes-sessions", "--db", "postgres://localhost/x", "list"],
        { cwd: app, env: USER_ENV },
      ).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect((pg as { code?: number }).code).toBe(1);
      expect((pg as { stderr: string }).stderr).toBe(
        "error: A postgres:// database needs the PostgreSQL store: npm install @hermes/postgres " +
          "(beside @hermes/cli; with -g if the CLI is installed globally)\n",
      );

      await sh(
        bin("tsc"),
        [
          "--noEmit",
          "--strict",
          "--module",
          "nodenext",
          "--moduleResolution",
          "nodenext",
          "--target",
          "es2022",
          "--types",
          "node",
          // No skipLibCheck: the installed declaration files themselves must type-check
          // (their imports of better-sqlite3's types included).
          "consumer.ts",
        ],
        app,
      );

      // The kit runs green from the installed packages (the installed vitest, not the workspace's).
      const report = join(work, "conformance.json");
      await sh(
        join(app, "node_modules", ".bin", "vitest"),
        ["run", "--testTimeout=60000", "--hookTimeout=60000", "--reporter=json", `--outputFile=${report}`],
        app,
      );
      const result = JSON.parse(readFileSync(report, "utf8")) as {
        success: boolean;
        numTotalTests: number;
        numPassedTests: number;
        testResults: Array<{ name: string }>;
      };
      expect(result.testResults.map((r) => r.name)).toEqual([join(app, "conformance.test.ts")]);
      expect(result.success).toBe(true);
      expect(result.numTotalTests).toBeGreaterThanOrEqual(250);
      expect(result.numPassedTests).toBe(result.numTotalTests);
    },
    20 * 60_000,
  );
});
