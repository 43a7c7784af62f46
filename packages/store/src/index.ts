export type { SearchIndexProgress, SearchIndexReport, SearchIndexStatus } from "@hermes/search";
export * from "./backend-kit.js";
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
export {
  type AnthropicContentBlock,
  type AnthropicConversation,
  type AnthropicMessage,
  toAnthropicMessages,
} from "./portable/anthropic-format.js";
export type { ConversationWindow, ConversationWindowOptions } from "./portable/conversation-window.js";
export {
  type ExportReport,
  type JsonlDestination,
  sessionsToJsonl,
  writeJsonl,
} from "./portable/export-jsonl.js";
export type { ExportStreamOptions } from "./portable/export-stream.js";
export type { ForkSessionOptions } from "./portable/fork-session.js";
export { ImportInvalidError, type InvalidImportLine } from "./portable/import-invalid-error.js";
export type { ImportReport, ImportSessionsOptions, ImportSource } from "./portable/import-sessions.js";
export type { IterMessagesOptions } from "./portable/iter-messages.js";
export {
  JSONL_FORMAT,
  JSONL_VERSION,
  type JsonlHeader,
  type PortableSession,
} from "./portable/jsonl-format.js";
export type { Lineage, LineageLinkKind, LineageNode } from "./portable/lineage.js";
export { type RenderableSession, sessionToMarkdown } from "./portable/markdown-format.js";
export type { MessagePage, MessagePageOptions } from "./portable/message-page.js";
export type { SessionPage, SessionPageOptions, SessionPageRow } from "./portable/session-page.js";
export type { UsageStatsOptions, UsageStatsRow } from "./portable/usage-stats.js";
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
