export { isSupportedSqliteVersion, MIN_SQLITE_VERSION } from "./database-file.js";
export {
  HermesStoreError,
  type HermesStoreErrorCode,
  InvalidArgumentError,
  SessionNotFoundError,
  StoreBusyError,
  StoreClosedError,
  StoreCorruptError,
  TitleConflictError,
  TitleTooLongError,
  UnsafePathError,
} from "./errors.js";
export { MAX_TITLE_LENGTH, sanitizeTitle } from "./sanitize-title.js";
export {
  type OpenSessionStoreOptions,
  openSessionStore,
  SessionStore,
  type StoreStats,
} from "./session-store.js";
export { resolveStatePath } from "./state-path.js";
export type {
  AppendMessageInput,
  AutoPruneOptions,
  AutoPruneResult,
  ConversationMessage,
  CreateSessionInput,
  EnsureSessionInput,
  ListSessionsRichOptions,
  MessageRow,
  RichSessionRow,
  SearchHit,
  SearchMessagesOptions,
  SessionExport,
  SessionRow,
  SessionWithLastActive,
  UpdateTokenCountsInput,
} from "./types.js";
export type { WriteStats } from "./write-queue.js";
