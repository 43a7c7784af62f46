import { coreTablesStep, reconcileColumnsStep } from "./base-schema.js";
import type { SchemaContribution } from "./migration.js";
import { titleIndexStep } from "./title-index.js";

/**
 * What `@hermes/schema` contributes to the chain: the core tables, column reconciliation and
 * the unique title index. The search tables come from `@hermes/search`.
 */
export const coreSchema: SchemaContribution = {
  base: [coreTablesStep, reconcileColumnsStep],
  finalize: [titleIndexStep],
};
