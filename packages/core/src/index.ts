// The backend-neutral contract of the session stores, by area (the folders of src/): the
// `SessionStore` interface and its backend/stats shapes, rows and options, errors, argument
// validation, browsing pages, display rules (names, money, snippets), titles, conversation
// shapes, portable formats, retention and search arguments.
export type {
  BackendInfo,
  CustomBackendInfo,
  PostgresBackendInfo,
  SqliteBackendInfo,
} from "./backend-info.js";
export {
  type MessagePage,
  type MessagePageAnchor,
  type MessagePageArguments,
  type MessagePageOptions,
  messagePageArguments,
  pageAround,
} from "./browsing/message-page-arguments.js";
export {
  finishSessionPage,
  isFilteredPage,
  type SessionPage,
  type SessionPageArguments,
  type SessionPageOptions,
  type SessionPageRow,
  sessionPageArguments,
  sessionPageCursor,
} from "./browsing/session-page-arguments.js";
export type {
  CapturedMessage,
  CapturedMessageState,
  ChangeBatch,
  ChangeCursor,
  ChangesSinceOptions,
  SessionMessageStates,
} from "./change-capture/change-batch.js";
export {
  type AnthropicContentBlock,
  type AnthropicConversation,
  type AnthropicMessage,
  MISSING_TOOL_RESULT,
  toAnthropicMessages,
} from "./conversation/anthropic-format.js";
export {
  isReplayedUserPrompt,
  MAX_LINEAGE_HOPS,
  REPLAY_COLUMNS,
  type ReplayRow,
  toConversationMessage,
} from "./conversation/conversation-message.js";
export {
  type ConversationWindow,
  type ConversationWindowOptions,
  conversationWindowArguments,
  estimateTokens,
  WindowPicker,
  type WindowRow,
} from "./conversation/conversation-window.js";
export { isPythonWhitespace, stripPythonWhitespace } from "./conversation/python-whitespace.js";
export { sanitizeContext } from "./conversation/sanitize-context.js";
export { formatUsd } from "./display/format-usd.js";
export {
  type NameableSession,
  sessionDisplayName,
  UNTITLED_SESSION,
} from "./display/session-display-name.js";
export { readSessionName, sessionPreview } from "./display/session-preview.js";
export { type SnippetPart, snippetParts } from "./display/snippet-parts.js";
export {
  formatToolCall,
  renderToolCallSnippet,
  type ToolCallView,
  toolCallsOf,
} from "./display/tool-call-snippet.js";
export {
  AbortedError,
  BackendError,
  HermesStoreError,
  type HermesStoreErrorCode,
  InvalidArgumentError,
  SchemaNewerError,
  SessionNotFoundError,
  StoreBusyError,
  StoreClosedError,
  StoreCorruptError,
  StoreReadOnlyError,
  TitleConflictError,
  TitleTooLongError,
  UnsafePathError,
} from "./errors/hermes-store-error.js";
export { ImportInvalidError, type InvalidImportLine } from "./errors/import-invalid-error.js";
export { previewOf, TIP_FIELDS } from "./listing/preview.js";
export {
  hasSessionFilter,
  type SessionFilterArguments,
  type SessionFilterOptions,
  sessionFilterArguments,
} from "./listing/session-filter-arguments.js";
export {
  encodeJson,
  MAX_APPEND_BATCH,
  messageRowFor,
  type NewMessageRow,
  type PreparedMessage,
  parseToolCalls,
  toMessageRow,
} from "./messages/message-row.js";
export { parsePythonJson } from "./messages/parse-python-json.js";
export {
  EXPORT_ALL_LIMIT,
  type ExportEvent,
  type ExportFilter,
  type ExportStreamOptions,
  exportFilter,
} from "./portable/export-options.js";
export { fitToCapacity, skipReason } from "./portable/fit-to-capacity.js";
export { type ForkSessionOptions, forkArguments, newSessionId } from "./portable/fork-arguments.js";
export { type IterMessagesOptions, iterMessagesArguments } from "./portable/iter-messages-arguments.js";
export {
  canonicalMessage,
  canonicalSession,
  JSONL_FORMAT,
  JSONL_VERSION,
  type JsonlHeader,
  jsonlHeader,
  MESSAGE_COLUMNS,
  MESSAGE_VIEW_COLUMNS,
  type PortableMessage,
  type PortableMessageFields,
  type PortableSession,
  PortableValidationError,
  parseJsonlHeader,
  parsePortableSession,
  SESSION_COLUMNS,
  SESSION_VIEW_COLUMNS,
  SOURCE_SCHEMA_META_KEY,
  sessionToJsonLine,
} from "./portable/jsonl-format.js";
export {
  type ChunkSink,
  type ExportReport,
  type JsonlDestination,
  jsonlHeaderLine,
  sessionsToJsonl,
  sinkFor,
  writeJsonl,
  writeJsonlExport,
} from "./portable/jsonl-writer.js";
export {
  assembleLineage,
  type Lineage,
  type LineageLinkKind,
  type LineageNode,
  type LineageRow,
  lineageArguments,
} from "./portable/lineage.js";
export { type RenderableSession, sessionToMarkdown } from "./portable/markdown-format.js";
export {
  type ImportBackend,
  type ImportCapacity,
  type ImportOutcome,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSkipReason,
  type ImportSource,
  importSessionsArguments,
  type PendingImport,
  runImport,
} from "./portable/run-import.js";
export {
  type UsageStatsArguments,
  type UsageStatsOptions,
  type UsageStatsRow,
  usageStatsArguments,
} from "./portable/usage-stats-arguments.js";
export {
  MESSAGE_VIEW_KEYS,
  type MessageViewFields,
  type MessageViewState,
  messageViewState,
  parseAbsorbedMessageUids,
  parseToolCallUids,
  toMessageViewFields,
} from "./read-model/message-view-fields.js";
export {
  flagValue,
  isUnlisted,
  SESSION_FLAG_KEYS,
  SESSION_VIEW_KEYS,
  type SessionViewFields,
  toSessionViewFields,
} from "./read-model/session-view-fields.js";
export {
  type AutoPruneBackend,
  LAST_AUTO_PRUNE_KEY,
  nonNegativeDuration,
  parsePythonFloat,
  pythonFloatText,
  runAutoPrune,
} from "./retention/auto-prune.js";
export {
  type PruneSessionsOptions,
  pruneVisibilityArguments,
} from "./retention/prune-sessions-options.js";
export { removeSessionFiles, sessionsDirOf } from "./retention/session-files.js";
export { SEARCH_LIMITS, type SearchArguments, searchArguments } from "./search/search-arguments.js";
export type {
  SearchIndexProgress,
  SearchIndexReport,
  SearchIndexStatus,
} from "./search/search-index-report.js";
export type { SessionStore } from "./session-store.js";
export { escapeLike } from "./sessions/escape-like.js";
export { jsonIfTruthy, type NewSessionRow, newSessionRow } from "./sessions/new-session-row.js";
export type { StoreChange, WatchChangesOptions } from "./store-change.js";
export type {
  CustomStoreStats,
  PostgresStoreStats,
  SideIndexStatus,
  SqliteStoreStats,
  StoreStats,
  WriteCounters,
} from "./store-stats.js";
export {
  decimalValue,
  LAST_NUMBER,
  lineageBase,
  NUMBERED_SUFFIX,
  nextLineageTitle,
  titleArgument,
} from "./titles/lineage-title.js";
export { MAX_TITLE_LENGTH, sanitizeTitle } from "./titles/sanitize-title.js";
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
  SearchContextMessage,
  SearchHit,
  SearchMessagesOptions,
  SearchSessionsOptions,
  SessionExport,
  SessionRow,
  SessionWithLastActive,
  UpdateTokenCountsInput,
} from "./types.js";
export {
  integerDelta,
  MAX_LIMIT,
  MAX_TEXT_LENGTH,
  nonNegativeInt,
  optionalBoolean,
  optionalNumber,
  optionalSignal,
  optionalString,
  optionalStringArray,
  optionsObject,
  requireId,
  throwIfAborted,
} from "./validation/arguments.js";
