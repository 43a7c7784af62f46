import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers/temp-dir.js";

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../../..");
const PACKAGES = ["core", "schema", "search", "store", "conformance", "web", "cli", "postgres"] as const;
/**
 * What the SQLite consumer installs: everything but the PostgreSQL store, the CLI's optional
 * peer (left out, so that the CLI's message about it is seen).
 */
const SQLITE_APP = PACKAGES.filter((name) => name !== "postgres");
/** What the PostgreSQL consumer installs: the PostgreSQL store and its closure, nothing else. */
const POSTGRES_APP = ["postgres", "core", "schema", "search"] as const;
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
async function sh(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = USER_ENV,
): Promise<string> {
  try {
    const { stdout } = await run(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024, env });
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${cmd} ${args.join(" ")} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`,
    );
  }
}

/**
 * A user's npm install gets better-sqlite3's prebuilt addon from its GitHub release; this
 * machine cannot download it, and compiling it again costs a minute or more. So the install is
 * handed the addon the workspace built from the same version for the same Node ABI, as the
 * local prebuild that better-sqlite3's installer (prebuild-install) looks for before it downloads.
 * Returns the environment variable that points the installer at it.
 */
async function localBetterSqlitePrebuild(work: string): Promise<Record<string, string>> {
  const storeRequire = createRequire(join(REPO, "packages", "store", "package.json"));
  const root = dirname(storeRequire.resolve("better-sqlite3/package.json"));
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  expect(existsSync(join(root, "build", "Release", "better_sqlite3.node"))).toBe(true);
  const dir = join(work, "prebuilds");
  mkdirSync(dir);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await sh("tar", ["-czf", join(dir, name), "-C", root, "build/Release/better_sqlite3.node"], work);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
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
// A PostgreSQL application: the store loads, refuses a bad option with a typed error of
// @hermes/core (no server needed), and its types are core's SessionStore.
const POSTGRES_SCRIPT = `
import { HermesStoreError } from "@hermes/core";
import { openPostgresSessionStore } from "@hermes/postgres";

const error = await openPostgresSessionStore({ connectionString: "postgres://localhost/x", writeDeadlineMs: -1 }).then(
  () => null,
  (e) => e,
);
console.log(JSON.stringify({ hermesError: error instanceof HermesStoreError, code: error?.code }));
`;
const POSTGRES_TYPES = `
import type { PostgresBackendInfo, PostgresStoreStats, SessionStore } from "@hermes/core";
import { openPostgresSessionStore, type PostgresSessionStore } from "@hermes/postgres";

const store: PostgresSessionStore = await openPostgresSessionStore({ connectionString: "postgres://db/x" });
const contract: SessionStore = store;
const backend: PostgresBackendInfo = store.backend;
const stats: PostgresStoreStats = store.stats();
export { contract, backend, stats };
`;

const CONFORMANCE_TEST = `
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describeSessionStoreConformance } from "@hermes/conformance";
import { openSessionStore } from "@hermes/store";

describeSessionStoreConformance({
  name: "sqlite",
  open: (options) =>
    openSessionStore({ path: join(mkdtempSync(join(tmpdir(), "conformance-")), "state.db"), ...options }),
  close: async (store) => {
    await store.close();
    rmSync(dirname(store.path), { recursive: true, force: true });
  },
  openReadOnly: (store) => openSessionStore({ path: store.path, readOnly: true }),
});
`;

/**
 * tsc as a consumer compiles: strict, and no skipLibCheck, so the installed declaration files
 * themselves must type-check (their imports of better-sqlite3's or pg's types included).
 */
const STRICT_TSC = [
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
];

/** An empty project under `work` that depends on the given tarballs (and dev dependencies). */
function consumer(
  work: string,
  name: string,
  packages: readonly string[],
  devDependencies: Record<string, string> = {},
): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: `hermes-pack-${name}`,
      private: true,
      type: "module",
      dependencies: Object.fromEntries(
        packages.map((p) => [`@hermes/${p}`, `file:../tarballs/hermes-${p}-0.1.0.tgz`]),
      ),
      devDependencies,
    }),
  );
  return dir;
}

/** publint --strict, attw and the listing and manifest of one tarball. */
async function checkTarball(work: string, tarballs: string, file: string): Promise<void> {
  const tgz = join(tarballs, file);
  await sh(bin("publint"), ["run", tgz, "--strict"], work);
  // ESM only (Node >= 20.19 can also require() it): CommonJS resolution is not a target.
  // The CLI has a bin and no module entry point: nothing for attw to resolve.
  if (file !== "hermes-cli-0.1.0.tgz") await sh(bin("attw"), [tgz, "--profile", "esm-only"], work);
  const listing = await sh("tar", ["-tzf", tgz], work);
  // Only the build output and package metadata are published: no sources, no tests.
  const entries = listing.trim().split("\n");
  for (const entry of entries) {
    // The session browser also ships its built front end (HTML, JS, CSS, precompressed).
    if (file === "hermes-web-0.1.0.tgz" && entry.startsWith("package/dist/client/")) continue;
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

/**
 * The PostgreSQL-only project: neither better-sqlite3 nor the SQLite store in its tree, and its
 * script and types work.
 */
async function checkPostgresApp(pgApp: string): Promise<void> {
  // @hermes/postgres needs neither better-sqlite3 nor the SQLite store: npm ls finds none
  // (and exits 1, as it does for a package nowhere in the tree).
  for (const name of ["better-sqlite3", "@hermes/store"]) {
    const ls = await run("npm", ["ls", name, "--all", "--json"], { cwd: pgApp }).catch(
      (e: { code: number; stdout: string }) => e,
    );
    expect((ls as { code?: number }).code, name).toBe(1);
    const tree = JSON.parse(ls.stdout) as { name: string; dependencies?: unknown };
    expect(tree, name).toEqual({ name: "hermes-pack-pg-app" });
    expect(existsSync(join(pgApp, "node_modules", ...name.split("/"))), name).toBe(false);
  }
  expect(existsSync(join(pgApp, "node_modules", "pg"))).toBe(true);
  writeFileSync(join(pgApp, "consumer.mjs"), POSTGRES_SCRIPT);
  writeFileSync(join(pgApp, "consumer.ts"), POSTGRES_TYPES);
  expect(JSON.parse(await sh(process.execPath, ["consumer.mjs"], pgApp))).toEqual({
    hermesError: true,
    code: "INVALID_ARGUMENT",
  });
  await sh(bin("tsc"), [...STRICT_TSC, "consumer.ts"], pgApp);
}

/** The SQLite project: its script, the installed CLI on the file it wrote, and its types. */
async function checkSqliteApp(app: string, dataDir: string): Promise<void> {
  writeFileSync(join(app, "consumer.mjs"), CONSUMER_SCRIPT);
  writeFileSync(join(app, "consumer.ts"), CONSUMER_TYPES);
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
  const hits = JSON.parse(await npx("--db", join(dataDir, "state.db"), "search", "记忆", "--json")) as Array<{
    id: number;
  }>;
  expect(hits.map((h) => h.id)).toEqual([2]);
  expect(existsSync(join(app, "node_modules", "pg"))).toBe(false);
  expect(existsSync(join(app, "node_modules", "@hermes", "postgres"))).toBe(false);
  const pg = await run("npx", ["--no-install", "hermes-sessions", "--db", "postgres://localhost/x", "list"], {
    cwd: app,
    env: USER_ENV,
  }).catch((e: { code: number; stdout: string; stderr: string }) => e);
  expect((pg as { code?: number }).code).toBe(1);
  expect((pg as { stderr: string }).stderr).toBe(
    "error: A postgres:// database needs the PostgreSQL store: npm install @hermes/postgres " +
      "(beside @hermes/cli; with -g if the CLI is installed globally)\n",
  );

  await checkInstalledServe(app, join(dataDir, "state.db"));
  await sh(bin("tsc"), [...STRICT_TSC, "consumer.ts"], app);
}

/**
 * `hermes-sessions serve` from the installed CLI, as `npx @hermes/cli serve` runs it: the built
 * front end ships in the tarballs (no build step), a search answers, and the file is unchanged.
 */
async function checkInstalledServe(app: string, db: string): Promise<void> {
  const digest = () => createHash("sha256").update(readFileSync(db)).digest("hex");
  const before = digest();
  // The installed bin itself (what npx resolves), so that the signal below reaches the server.
  const child = spawn(
    join(app, "node_modules", ".bin", "hermes-sessions"),
    ["--db", db, "serve", "--port", "0", "--json"],
    {
      cwd: app,
      env: USER_ENV,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  try {
    const line = await new Promise<string>((resolveLine, reject) => {
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        // `--json` prints one (pretty-printed) JSON object once the server listens.
        try {
          JSON.parse(out);
          resolveLine(out);
        } catch {}
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        err += chunk;
      });
      child.on("exit", (code) => reject(new Error(`serve exited (${code}) before listening: ${err}`)));
    });
    const { url, origin, writable } = JSON.parse(line) as { url: string; origin: string; writable: boolean };
    expect(writable).toBe(false);
    const token = new URL(url).searchParams.get("token") ?? "";
    const get = (path: string) =>
      fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const page = await get("/");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<div id="app">');
    const script = /<script[^>]+src="([^"]+)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await get(script!);
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(1000);
    const search = await get(`/api/search?q=${encodeURIComponent("记忆")}`);
    expect(search.status).toBe(200);
    const answer = (await search.json()) as { hits: Array<{ id: number }> };
    expect(answer.hits.map((h) => h.id)).toEqual([2]);
  } finally {
    child.kill("SIGTERM");
  }
  expect(digest()).toBe(before);
}

/** The kit runs green from the installed packages (the installed vitest, not the workspace's). */
async function checkConformanceKit(work: string, app: string): Promise<void> {
  writeFileSync(join(app, "conformance.test.ts"), CONFORMANCE_TEST);
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
}

/** Two empty projects with the tarballs installed, then each checked (at the same time). */
async function installAndCheckConsumers(work: string): Promise<void> {
  const app = consumer(work, "app", SQLITE_APP, { vitest: VITEST_VERSION });
  const pgApp = consumer(work, "pg-app", POSTGRES_APP);
  // Two empty projects installed side by side: the SQLite one (its tarballs, their
  // dependencies and vitest; better-sqlite3's addon from the local prebuild) and the
  // PostgreSQL one.
  const install = ["install", "--no-audit", "--no-fund", "--loglevel=error"];
  const prebuild = { ...USER_ENV, ...(await localBetterSqlitePrebuild(work)) };
  await Promise.all([sh("npm", install, app, prebuild), sh("npm", install, pgApp)]);
  // The addon came from that prebuild: node-gyp, had it compiled, leaves its Makefile.
  const installedAddon = join(app, "node_modules", "better-sqlite3", "build");
  expect(existsSync(join(installedAddon, "Release", "better_sqlite3.node"))).toBe(true);
  expect(existsSync(join(installedAddon, "Makefile"))).toBe(false);
  await Promise.all([
    checkPostgresApp(pgApp),
    checkSqliteApp(app, join(work, "data")),
    checkConformanceKit(work, app),
  ]);
}

describe("the published packages", () => {
  it(
    "pack (pnpm), pass publint --strict and attw, install with npm outside the workspace (a SQLite and a PostgreSQL-only project), and work there",
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
        "hermes-postgres-0.1.0.tgz",
        "hermes-schema-0.1.0.tgz",
        "hermes-search-0.1.0.tgz",
        "hermes-store-0.1.0.tgz",
        "hermes-web-0.1.0.tgz",
      ]);
      // The tarballs are linted (one at a time) while the consumers install from them and run:
      // the steps are independent and mostly wait on child processes, so they share the cores.
      const lint = (async () => {
        for (const file of files) await checkTarball(work, tarballs, file);
      })();
      await Promise.all([lint, installAndCheckConsumers(work)]);
    },
    20 * 60_000,
  );
});
