import type { TestProject } from "vitest/node";
import { findPgBin, type PgCluster, startPgCluster } from "./pg-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Connection string of the throwaway cluster, or "" when none could be started. */
    pgConnectionString: string;
    pgUnavailable: string;
  }
}

let cluster: PgCluster | undefined;

/** Starts one PostgreSQL cluster for the whole @hermes/postgres test project. */
export async function setup(project: TestProject): Promise<void> {
  if (process.env.HERMES_PG_URL) {
    project.provide("pgConnectionString", process.env.HERMES_PG_URL);
    project.provide("pgUnavailable", "");
    return;
  }
  if (findPgBin() === null) {
    project.provide("pgConnectionString", "");
    project.provide("pgUnavailable", "PostgreSQL server binaries not found; .ci/run installs them");
    return;
  }
  cluster = await startPgCluster();
  project.provide("pgConnectionString", cluster.connectionString);
  project.provide("pgUnavailable", "");
}

export function teardown(): void {
  cluster?.stop();
}
