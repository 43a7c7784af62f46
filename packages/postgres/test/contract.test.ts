import { describePostgresConformance } from "./helpers/conformance-target.js";

// The SessionStore contract (@hermes/conformance), unchanged, against a real PostgreSQL server
// (one fresh schema per store). `vacuum` runs PostgreSQL's VACUUM (ANALYZE): the suite's
// expectations (rows kept, writes continue) hold for it as they do for SQLite's.
describePostgresConformance("postgres");
