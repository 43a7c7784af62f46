export { CJK_RANGES, containsCjk, countCjk, isCjkCodePoint } from "./cjk.js";
export { FTS_TABLE, FTS_TABLES, FTS_TRIGGERS, ftsTableScript, TRIGRAM_TABLE } from "./fts-ddl.js";
export {
  ensureFtsStep,
  searchSchema,
  v10TrigramStep,
  v11FtsReindexStep,
} from "./migrations/search-schema.js";
export { pyStrip, sanitizeFts5Query } from "./sanitize-fts5-query.js";
