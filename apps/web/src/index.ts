export type {
  DeleteAnswer,
  ErrorAnswer,
  FiltersAnswer,
  ListedSession,
  MessagesAnswer,
  PruneAnswer,
  RenameAnswer,
  SearchAnswer,
  SessionAnswer,
  SessionsAnswer,
  UsageAnswer,
} from "./api/api-answers.js";
export { openInBrowser } from "./open-in-browser.js";
export { CSRF_HEADER } from "./security/csrf-guard.js";
export {
  type RunningSessionBrowser,
  type ServeOptions,
  serveSessionBrowser,
} from "./serve-session-browser.js";
export { WebServerError, type WebServerErrorCode } from "./web-server-error.js";
