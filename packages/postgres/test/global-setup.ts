import { type PgTestContext, providePgServer } from "@hermes/postgres/testing";

declare module "vitest" {
  export interface ProvidedContext extends PgTestContext {}
}

// One PostgreSQL server for the whole project: HERMES_PG_URL, or a throwaway cluster.
export default providePgServer;
