import { defineConfig } from "vitest/config";

// One project per package; tests import the packages' built `dist` (the root `test` script
// builds first), the same code that child processes in the contention tests run.
const projects = [
  ["@hermes/schema", "packages/schema"],
  ["@hermes/search", "packages/search"],
  ["@hermes/store", "packages/store"],
  ["@hermes/postgres", "packages/postgres"],
  ["@hermes/web", "apps/web"],
  ["@hermes/cli", "apps/cli"],
  ["@hermes/bench", "apps/bench"],
] as const;

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
        // The PostgreSQL project starts one throwaway server for all its tests.
        ...(name === "@hermes/postgres" ? { globalSetup: ["test/global-setup.ts"] } : {}),
        // Type-level tests (`*.test-d.ts`, checked by tsc) where a package has them.
        ...(name === "@hermes/schema"
          ? { typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "tsconfig.test.json" } }
          : {}),
      },
    })),
  },
});
