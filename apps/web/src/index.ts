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
export { createWebApp, type WebAppOptions } from "./create-app.js";
export { type ChangeFeed, pollingChangeFeed, type StoreChange, storeChangeFeed } from "./live/change-feed.js";
export { openInBrowser } from "./open-in-browser.js";
export { isPostgresUrl, openServedStore, type ServedDatabase } from "./open-store.js";
export { CSRF_HEADER } from "./security/csrf-guard.js";
export { allowedHosts, isLoopbackHost } from "./security/host-guard.js";
export {
  type RunningSessionBrowser,
  type ServeOptions,
  serveSessionBrowser,
} from "./serve-session-browser.js";
export { WebServerError, type WebServerErrorCode } from "./web-server-error.js";
