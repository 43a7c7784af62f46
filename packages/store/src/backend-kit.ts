/**
 * Pure building blocks of the store, exported for other backends of the same API
 * (`@hermes/postgres`): argument validation, row shaping, title lineage parsing, previews and
 * the JSONL format. None of them touches a database, so every backend returns the same values
 * and raises the same errors for the same input.
 */
import type { SessionStore } from "./session-store.js";

/**
 * The public surface of {@link SessionStore} as a structural type. `SessionStore` has ES private
 * fields, so only its own instances satisfy it; other backends (and the contract suites) use this.
 */
export type SessionStoreApi = { [K in keyof SessionStore]: SessionStore[K] };

export {
  isReplayedUserPrompt,
  MAX_LINEAGE_HOPS,
  parseOr,
  REPLAY_COLUMNS,
  toConversationMessage,
  truthy,
} from "./operations/conversation.js";
export { previewOf, TIP_FIELDS } from "./operations/listing.js";
export { MAX_APPEND_BATCH, messageRowFor, parseToolCalls, toMessageRow } from "./operations/messages.js";
export {
  type AutoPruneBackend,
  duration,
  EXPORT_ALL_LIMIT,
  LAST_AUTO_PRUNE_KEY,
  parsePythonFloat,
  pythonFloatText,
  removeSessionFiles,
  runAutoPrune,
  sessionsDirOf,
} from "./operations/retention.js";
export { type SearchArguments, searchArguments } from "./operations/search.js";
export { escapeLike, jsonIfTruthy, newSessionRow } from "./operations/sessions.js";
export {
  decimalValue,
  LAST_NUMBER,
  lineageBase,
  NUMBERED_SUFFIX,
  nextLineageTitle,
  titleArgument,
} from "./operations/titles.js";
export { parsePythonJson } from "./parse-python-json.js";
export {
  conversationWindowArguments,
  estimateTokens,
  WindowPicker,
  type WindowRow,
} from "./portable/conversation-window.js";
export { type ChunkSink, jsonlHeaderLine, sinkFor } from "./portable/export-jsonl.js";
export { exportFilter } from "./portable/export-stream.js";
export { forkArguments, newSessionId } from "./portable/fork-session.js";
export { iterMessagesArguments } from "./portable/iter-messages.js";
export {
  canonicalMessage,
  canonicalSession,
  jsonlHeader,
  MESSAGE_COLUMNS,
  PortableValidationError,
  parseJsonlHeader,
  parsePortableSession,
  SESSION_COLUMNS,
} from "./portable/jsonl-format.js";
export {
  type MessagePageArguments,
  messagePageArguments,
  pageAround,
} from "./portable/message-page.js";
export {
  badLineId,
  decodeLine,
  type ImportBackend,
  type ImportOutcome,
  type PendingImport,
  readLines,
  runImport,
  validated as importOptions,
} from "./portable/run-import.js";
export {
  finishSessionPage,
  type SessionPageArguments,
  sessionPageArguments,
} from "./portable/session-page.js";
export { sanitizeContext, stripPythonWhitespace } from "./sanitize-context.js";
export {
  integer,
  MAX_LIMIT,
  MAX_TEXT_LENGTH,
  nonNegativeInt,
  optionalNumber,
  optionalString,
  optionalStringArray,
  options,
  requireId,
} from "./validate.js";
