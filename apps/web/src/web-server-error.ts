/** What went wrong when starting the session browser. */
export type WebServerErrorCode =
  /** `--host` is not a loopback address and no `--token` was given. */
  | "TOKEN_REQUIRED"
  /** The token given is too short to be a secret. */
  | "WEAK_TOKEN"
  /** No database at the path, or it is not a file. */
  | "NO_DATABASE"
  /** The address or port cannot be listened on. */
  | "LISTEN_FAILED"
  /** `--db postgres://…` without the `@hermes/postgres` package installed. */
  | "POSTGRES_UNAVAILABLE";

/** A typed error of `serveSessionBrowser`: a caller branches on `code`, never on the message. */
export class WebServerError extends Error {
  readonly code: WebServerErrorCode;

  constructor(code: WebServerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "WebServerError";
    this.code = code;
  }
}
