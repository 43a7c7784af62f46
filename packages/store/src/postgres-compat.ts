// Temporary, until @hermes/postgres imports @hermes/core: the helpers, old names and old shapes
// it imports from @hermes/store today, re-exported from core. Not part of the store's documented
// API; this file goes once postgres has switched.
import {
  type SessionStore as CoreSessionStore,
  searchArguments as checkedSearchArguments,
  type SearchMessagesOptions,
  type SqliteStoreStats,
} from "@hermes/core";
import { planSearchWithinLimits, type SearchPlan } from "@hermes/search";

export {
  canonicalMessage,
  canonicalSession,
  conversationWindowArguments,
  EXPORT_ALL_LIMIT,
  escapeLike,
  exportFilter,
  forkArguments,
  type ImportOutcome,
  integerDelta as integer,
  isReplayedUserPrompt,
  iterMessagesArguments,
  jsonlHeaderLine,
  lineageBase,
  MAX_APPEND_BATCH,
  MAX_LIMIT,
  MAX_LINEAGE_HOPS,
  MESSAGE_COLUMNS,
  messageRowFor,
  newSessionId,
  newSessionRow,
  nextLineageTitle,
  nonNegativeDuration as duration,
  nonNegativeInt,
  optionalNumber,
  optionalString,
  optionalStringArray,
  optionsObject as options,
  type PendingImport,
  previewOf,
  REPLAY_COLUMNS,
  removeSessionFiles,
  requireId,
  runAutoPrune,
  runImport,
  SESSION_COLUMNS,
  sessionsDirOf,
  sinkFor,
  TIP_FIELDS,
  titleArgument,
  toConversationMessage,
  toMessageRow,
  WindowPicker,
} from "@hermes/core";

/** @deprecated Temporary, until postgres imports core: the former flat `stats()` shape. */
export type StoreStats = Omit<SqliteStoreStats, "backend">;

/**
 * @deprecated Temporary, until postgres imports core: the former structural store type (with
 * `path` and the flat stats), which both stores satisfy. Use `SessionStore` of `@hermes/core`.
 */
export type SessionStoreApi = Omit<CoreSessionStore, "backend" | "stats"> & {
  readonly path: string;
  stats(): StoreStats;
};

/** @deprecated Temporary, until postgres imports core: checked search arguments with their plan. */
export function searchArguments(
  query: unknown,
  o: SearchMessagesOptions | undefined,
): ReturnType<typeof checkedSearchArguments> & { plan: SearchPlan } {
  const args = checkedSearchArguments(query, o);
  return { ...args, plan: planSearchWithinLimits(args.query) };
}
