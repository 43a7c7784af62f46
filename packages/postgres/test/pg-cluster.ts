// The harness lives in the package (`@hermes/postgres/testing`) so benchmarks can start a server too.
export { findPgBin, type PgCluster, startPgCluster } from "@hermes/postgres/testing";
