import { randomBytes } from "node:crypto";
import { describeSessionStoreConformance } from "@hermes/conformance";
import { openPostgresSessionStore } from "@hermes/postgres";
import { inject } from "vitest";

// The SessionStore contract (@hermes/conformance), unchanged, against a real PostgreSQL server
// (one fresh schema per store). `vacuum` runs PostgreSQL's VACUUM (ANALYZE): the suite's
// expectations (rows kept, writes continue) hold for it as they do for SQLite's.
const url = inject("pgConnectionString");
if (url === "") throw new Error(`PostgreSQL unavailable: ${inject("pgUnavailable")}`);

describeSessionStoreConformance({
  name: "postgres",
  open: (options) =>
    openPostgresSessionStore({
      connectionString: url,
      schema: `t_${randomBytes(6).toString("hex")}`,
      maxConnections: 4,
      ...options,
    }),
});
