// The SQLite adapter (openSessionStore, the SessionStore class, resolveStatePath, the SQLite
// version check, read-only access to a file, backup and restore) and, re-exported from @hermes/core so that
// `@hermes/store` alone serves the API of API.md, the errors, title rules, formats and types a
// user of the SQLite store meets.
export {
  type AnthropicContentBlock,
  type AnthropicConversation,
  type AnthropicMessage,
  type AppendMessageInput,
  type AutoPruneOptions,
  type AutoPruneResult,
  BackendError,
  type CapturedMessage,
  type CapturedMessageState,
  type ChangeBatch,
  type ChangeCursor,
  type ChangesSinceOptions,
  type ConversationMessage,
  type ConversationWindow,
  type ConversationWindowOptions,
  type CreateSessionInput,
  type EnsureSessionInput,
  type ExportReport,
  type ExportStreamOptions,
  type ForkSessionOptions,
  HermesStoreError,
  type HermesStoreErrorCode,
  ImportInvalidError,
  type ImportReport,
  type ImportSessionsOptions,
  type ImportSource,
  InvalidArgumentError,
  type InvalidImportLine,
  type IterMessagesOptions,
  JSONL_FORMAT,
  JSONL_VERSION,
  type JsonlDestination,
  type JsonlHeader,
  type Lineage,
  type LineageLinkKind,
  type LineageNode,
  type ListSessionsRichOptions,
  MAX_TEXT_LENGTH,
  MAX_TITLE_LENGTH,
  type MessagePage,
  type MessagePageOptions,
  type MessageRow,
  type PortableSession,
  type RenderableSession,
  type RichSessionRow,
  SchemaNewerError,
  type SearchHit,
  type SearchIndexProgress,
  type SearchIndexReport,
  type SearchIndexStatus,
  type SearchMessagesOptions,
  type SearchSessionsOptions,
  type SessionExport,
  type SessionMessageStates,
  SessionNotFoundError,
  type SessionPage,
  type SessionPageOptions,
  type SessionPageRow,
  type SessionRow,
  type SessionWithLastActive,
  type SqliteBackendInfo,
  type SqliteStoreStats,
  StoreBusyError,
  type StoreChange,
  StoreClosedError,
  StoreCorruptError,
  StoreReadOnlyError,
  sanitizeTitle,
  sessionsToJsonl,
  sessionToMarkdown,
  TitleConflictError,
  TitleTooLongError,
  toAnthropicMessages,
  UnsafePathError,
  type UpdateTokenCountsInput,
  type UsageStatsOptions,
  type UsageStatsRow,
  type WatchChangesOptions,
  writeJsonl,
} from "@hermes/core";
export { ArchiveInvalidError } from "./backup/archive-invalid-error.js";
export {
  ARCHIVE_SUFFIX,
  type BackupManifest,
  MANIFEST_SUFFIX,
  manifestPathOf,
  readBackupManifest,
} from "./backup/backup-manifest.js";
export { type BackupOptions, type BackupResult, backupTo, rotateBackups } from "./backup/backup-to.js";
export type { SnapshotCheck } from "./backup/check-snapshot.js";
export { type FileHolder, findHolders } from "./backup/find-holders.js";
export { type BackupEntry, listBackups } from "./backup/list-backups.js";
export { type RestoreOptions, type RestoreResult, restoreFrom } from "./backup/restore-from.js";
export { TargetInUseError } from "./backup/target-in-use-error.js";
export type { BackupProgress } from "./backup/unpack-archive.js";
export { type BackupVerification, verifyBackup } from "./backup/verify-backup.js";
export { changesSince } from "./change-capture/changes-since.js";
export { isSupportedSqliteVersion, MIN_SQLITE_VERSION } from "./database-file.js";
export type { FileFeatures, FileProfile } from "./file-profile.js";
export { type StoreAccess, writeBlocker as whyNotWritable } from "./open-read-only-store.js";
export { type OpenSessionStoreOptions, openSessionStore, type WriterMode } from "./open-session-store.js";
export { openReadOnlyDatabase, type ReadOnlyAccess, type ReadOnlyDatabase } from "./read-only-file.js";
export { SessionStore } from "./session-store.js";
export type { CjkIndexMode } from "./side-index/cjk-side-index.js";
export { resolveStatePath } from "./state-path.js";
