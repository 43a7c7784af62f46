import { randomBytes } from "node:crypto";
import { describeSessionStoreConformance } from "@hermes/conformance";
import { openPostgresSessionStore } from "@hermes/postgres";
import { inject } from "vitest";

// The SessionStore contract again, on stores that seal their word index every 3 appends (in
// the background, as they cross the mark) and re-read its ranges before every search: the
// split index's seals, merges and range switches under every operation the contract checks.
const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);

const schemas = new WeakMap<object, string>();

describeSessionStoreConformance({
  name: "postgres (sealing every 3 appends)",
  async open(options) {
    const schema = `t_${randomBytes(6).toString("hex")}`;
    const store = await openPostgresSessionStore({
      connectionString: url,
      schema,
      maxConnections: 4,
      wordIndex: { sealEvery: 3, refreshMs: 0, dropDelayMs: 0 },
      ...options,
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
