import { type PgTestContext, providePgServer } from "@hermes/postgres/testing";

declare module "vitest" {
  export interface ProvidedContext extends PgTestContext {}
}

// One PostgreSQL server for the project's tests, as for @hermes/postgres's own.
export default providePgServer;
