import { randomBytes } from "node:crypto";
import { describeSessionStoreConformance } from "@hermes/conformance";
import { type OpenPostgresSessionStoreOptions, openPostgresSessionStore } from "@hermes/postgres";
import { inject } from "vitest";

/**
 * The SessionStore contract (@hermes/conformance), unchanged, against the tests' server: one
 * fresh schema per store, opened with `options` on top of the kit's own.
 */
export function describePostgresConformance(
  name: string,
  options: Omit<OpenPostgresSessionStoreOptions, "connectionString" | "pool" | "schema"> = {},
): void {
  const url = inject("pgConnectionString");
  if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);
  // The schema of each store the kit opened, for a read-only store on the same data.
  const schemas = new WeakMap<object, string>();
  describeSessionStoreConformance({
    name,
    async open(kitOptions) {
      const schema = `t_${randomBytes(6).toString("hex")}`;
      const store = await openPostgresSessionStore({
        connectionString: url,
        schema,
        maxConnections: 4,
        ...options,
        ...kitOptions,
      });
      schemas.set(store, schema);
      return store;
    },
    async openReadOnly(store) {
      const schema = schemas.get(store);
      if (schema === undefined) throw new Error("openReadOnly: not a store this target opened");
      return openPostgresSessionStore({ connectionString: url, schema, maxConnections: 2, readOnly: true });
    },
  });
}
