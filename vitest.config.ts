import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// One project per package (and per private test package under tests/); tests import the
// packages' built `dist` (the root `test` script builds first), the same code that child
// processes in the contention tests run.
const projects = [
  ["@hermes/schema", "packages/schema"],
  ["@hermes/core", "packages/core"],
  ["@hermes/search", "packages/search"],
  ["@hermes/store", "packages/store"],
  ["@hermes/postgres", "packages/postgres"],
  ["@hermes/conformance", "packages/conformance"],
  ["@hermes/web", "apps/web"],
  ["@hermes/cli", "apps/cli"],
  ["@hermes/bench", "apps/bench"],
  ["@hermes/differential", "tests/differential"],
  ["@hermes/repository", "tests/repository"],
] as const;

/** Projects whose tests need a PostgreSQL server: each starts one for all its tests. */
const NEEDS_POSTGRES: ReadonlySet<string> = new Set(["@hermes/postgres", "@hermes/differential"]);

/**
 * Files whose checks depend on having the machine to themselves: writers racing for one lock,
 * group commit and pacing, busy timeouts of reference writers, long upgrades inside a test
 * timeout, thread priorities. They run in a project of their own (`<package>:serial`), one
 * file at a time, after every other file (vitest runs single-worker projects last).
 */
const SERIAL: Readonly<Record<string, readonly string[]>> = {
  "@hermes/store": [
    "background-thread-priority",
    "cjk-side-index-build",
    "contention",
    "group-commit",
    "migrations",
    "migrations-processes",
    "reliability-interop-load",
    "search-merge-pacing",
    "shared-commits",
  ],
};

/**
 * Every other file runs two at a time even on 2 cores (vitest's default is cores − 1): most
 * of a file's time is spent waiting on child processes, fsync or the PostgreSQL server.
 */
const PARALLEL_WORKERS = Math.max(2, availableParallelism() - 1);

const serialFiles = (name: string) => (SERIAL[name] ?? []).map((file) => `test/${file}.test.ts`);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: PARALLEL_WORKERS,
    projects: [
      ...projects.map(([name, root]) => ({
        extends: true as const,
        test: {
          name,
          root,
          include: ["test/**/*.test.ts"],
          exclude: serialFiles(name),
          // `providePgServer` of @hermes/postgres/testing: HERMES_PG_URL or a throwaway cluster.
          ...(NEEDS_POSTGRES.has(name) ? { globalSetup: ["test/global-setup.ts"] } : {}),
          // Type-level tests (`*.test-d.ts`, checked by tsc) where a package has them.
          ...(name === "@hermes/schema"
            ? {
                typecheck: {
                  enabled: true,
                  include: ["test/**/*.test-d.ts"],
                  tsconfig: "tsconfig.test.json",
                },
              }
            : {}),
        },
      })),
      ...projects
        .filter(([name]) => SERIAL[name] !== undefined)
        .map(([name, root]) => ({
          extends: true as const,
          test: { name: `${name}:serial`, root, include: serialFiles(name), fileParallelism: false },
        })),
    ],
  },
});
