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
] as const;

/** Projects whose tests need a PostgreSQL server: each starts one for all its tests. */
const NEEDS_POSTGRES: ReadonlySet<string> = new Set(["@hermes/postgres", "@hermes/differential"]);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: projects.map(([name, root]) => ({
      extends: true,
      test: {
        name,
        root,
        include: ["test/**/*.test.ts"],
        // `providePgServer` of @hermes/postgres/testing: HERMES_PG_URL or a throwaway cluster.
        ...(NEEDS_POSTGRES.has(name) ? { globalSetup: ["test/global-setup.ts"] } : {}),
        // Type-level tests (`*.test-d.ts`, checked by tsc) where a package has them.
        ...(name === "@hermes/schema"
          ? { typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "tsconfig.test.json" } }
          : {}),
      },
    })),
  },
});
