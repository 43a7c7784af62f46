/**
 * Every error code a session store raises, whatever its backend. Branch on `code`, never on the
 * message.
 *
 * - `TITLE_TOO_LONG`, `TITLE_CONFLICT`: a title over `MAX_TITLE_LENGTH`, or held by another session.
 * - `SESSION_NOT_FOUND`: a write named a session that does not exist.
 * - `STORE_BUSY`: the write deadline passed while another connection held the lock.
 * - `INVALID_ARGUMENT`: a value of the wrong type or range.
 * - `STORE_CLOSED`: a call after `close()`.
 * - `STORE_CORRUPT`: the database (file) is damaged.
 * - `STORE_READ_ONLY`: the database cannot be written (read-only file system, permissions, or a
 *   store opened read-only).
 * - `STORE_FULL`: the disk is full; nothing of the write was kept.
 * - `UNSAFE_PATH`: a database path that is a symbolic link, holds NUL bytes, ….
 * - `IMPORT_INVALID`: an import source holds lines that cannot be imported.
 * - `UNSUPPORTED_SQLITE`: the SQLite linked into the driver is too old (SQLite adapter).
 * - `BACKEND_ERROR`: any other failure of the database itself; the driver's error is the `cause`
 *   and its code (a SQLite result code, a PostgreSQL SQLSTATE) is `BackendError.backendCode`.
 * - `SCHEMA_NEWER`: a write on a database written by a newer schema than this store writes (a newer
 *   Hermes Agent's file); the store reads it and never writes it (`SchemaNewerError`).
 * - `ABORTED`: the caller aborted the operation through its `signal` (`AbortedError`).
 * - `ARCHIVE_INVALID`: a backup archive that is missing, damaged or fails its checks (SQLite adapter).
 * - `TARGET_IN_USE`: a restore refused because a process holds the file it would replace.
 */
export type HermesStoreErrorCode =
  | "TITLE_TOO_LONG"
  | "TITLE_CONFLICT"
  | "SESSION_NOT_FOUND"
  | "STORE_BUSY"
  | "INVALID_ARGUMENT"
  | "STORE_CLOSED"
  | "STORE_CORRUPT"
  | "STORE_READ_ONLY"
  | "SCHEMA_NEWER"
  | "ABORTED"
  | "STORE_FULL"
  | "UNSAFE_PATH"
  | "IMPORT_INVALID"
  | "UNSUPPORTED_SQLITE"
  | "BACKEND_ERROR"
  | "ARCHIVE_INVALID"
  | "TARGET_IN_USE";

/**
 * Base class of every error a session store raises on purpose.
 *
 * @example
 * try { await store.setSessionTitle(id, "Deploy") }
 * catch (e) { if (e instanceof HermesStoreError && e.code === "TITLE_CONFLICT") … }
 */
export class HermesStoreError extends Error {
  readonly code: HermesStoreErrorCode;

  constructor(code: HermesStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "HermesStoreError";
    this.code = code;
  }
}

/** A title longer than `MAX_TITLE_LENGTH` code points after sanitizing. */
export class TitleTooLongError extends HermesStoreError {
  readonly length: number;
  readonly maxLength: number;
  constructor(length: number, maxLength: number) {
    super("TITLE_TOO_LONG", `Title too long (${length} chars, max ${maxLength})`);
    this.name = "TitleTooLongError";
    this.length = length;
    this.maxLength = maxLength;
  }
}

/** The title is already used by another session. */
export class TitleConflictError extends HermesStoreError {
  readonly title: string;
  /** The session that holds the title. */
  readonly sessionId: string;
  constructor(title: string, sessionId: string) {
    super("TITLE_CONFLICT", `Title '${title}' is already in use by session ${sessionId}`);
    this.name = "TitleConflictError";
    this.title = title;
    this.sessionId = sessionId;
  }
}

/** A write named a session that does not exist (append, or create with an unknown parent). */
export class SessionNotFoundError extends HermesStoreError {
  readonly sessionId: string;
  constructor(sessionId: string, message?: string, options?: { cause?: unknown }) {
    super("SESSION_NOT_FOUND", message ?? `Session ${sessionId} does not exist`, options);
    this.name = "SessionNotFoundError";
    this.sessionId = sessionId;
  }
}

/** The write deadline passed while another connection held the write lock. */
export class StoreBusyError extends HermesStoreError {
  readonly attempts: number;
  readonly waitedMs: number;
  constructor(attempts: number, waitedMs: number, options?: { cause?: unknown }) {
    super(
      "STORE_BUSY",
      `The database stayed locked by another connection for ${Math.round(waitedMs)} ms ` +
        `(${attempts} attempts); nothing was written. Retry later or raise writeDeadlineMs.`,
      options,
    );
    this.name = "StoreBusyError";
    this.attempts = attempts;
    this.waitedMs = waitedMs;
  }
}

/** An argument of the wrong type or range. */
export class InvalidArgumentError extends HermesStoreError {
  /** Name of the offending argument, e.g. `limit` or `id`. */
  readonly argument: string;
  constructor(argument: string, message: string) {
    super("INVALID_ARGUMENT", message);
    this.name = "InvalidArgumentError";
    this.argument = argument;
  }
}

/** A call after `close()`. */
export class StoreClosedError extends HermesStoreError {
  constructor() {
    super("STORE_CLOSED", "The session store is closed; open a new one with openSessionStore()");
    this.name = "StoreClosedError";
  }
}

/** The call's `signal` aborted it (before it started or while it ran); nothing was written. */
export class AbortedError extends HermesStoreError {
  constructor(message = "The operation was aborted by its signal", options?: { cause?: unknown }) {
    super("ABORTED", message, options);
    this.name = "AbortedError";
  }
}

/** The database file is damaged or is not a SQLite database. */
export class StoreCorruptError extends HermesStoreError {
  readonly path: string;
  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super("STORE_CORRUPT", message, options);
    this.name = "StoreCorruptError";
    this.path = path;
  }
}

/** A database path, or one of its sidecars, is unsafe (a symbolic link, NUL bytes, …). */
export class UnsafePathError extends HermesStoreError {
  readonly path: string;
  constructor(path: string, message: string) {
    super("UNSAFE_PATH", message);
    this.name = "UnsafePathError";
    this.path = path;
  }
}

/**
 * A failure of the database itself that no other code describes (`BACKEND_ERROR`): the driver's
 * error is kept in `cause`, and its code in `backendCode` (a SQLite result code such as
 * `SQLITE_CANTOPEN`, a PostgreSQL SQLSTATE such as `42P01`) when it has one.
 */
export class BackendError extends HermesStoreError {
  readonly backendCode: string | undefined;
  constructor(message: string, options?: { cause?: unknown; backendCode?: string }) {
    super("BACKEND_ERROR", message, options && "cause" in options ? { cause: options.cause } : undefined);
    this.name = "BackendError";
    this.backendCode = options?.backendCode;
  }
}

/**
 * A write on a store that cannot write (`STORE_READ_ONLY`): opened with `readOnly: true`, or
 * opened read-only because this process cannot write the database (a file or folder it may not
 * write, a read-only file system). Nothing was written.
 */
export class StoreReadOnlyError extends HermesStoreError {
  /** The store's `path` (the database file; `postgresql` on PostgreSQL). */
  readonly path: string;
  /** Why the store is read-only, in words (`opened with readOnly: true`, `… is not writable`). */
  readonly reason: string;
  constructor(path: string, reason: string, what = "This store") {
    super("STORE_READ_ONLY", `${what} cannot write to ${path}: ${reason}. Nothing was written.`);
    this.name = "StoreReadOnlyError";
    this.path = path;
    this.reason = reason;
  }
}

/**
 * A write on a database of a newer schema (`SCHEMA_NEWER`): a file written by a newer Hermes
 * Agent (`schema_version` above the one this store writes), which the store reads with the
 * agent's own rules and never writes. Also raised by an open that insisted on writing.
 */
export class SchemaNewerError extends HermesStoreError {
  /** The store's `path` (the database file). */
  readonly path: string;
  /** The file's `schema_version`. */
  readonly fileVersion: number;
  /** The schema version this store writes. */
  readonly supportedVersion: number;
  /**
   * `operation`: what was refused, in the user's words (`Setting a title`, `A writable open`);
   * the message reads "Setting a title is refused: … Nothing was written."
   */
  constructor(path: string, fileVersion: number, supportedVersion: number, operation: string) {
    super(
      "SCHEMA_NEWER",
      `${operation} is refused: ${path} has schema version ${fileVersion}, newer than version ${supportedVersion} that this store writes; ` +
        "it belongs to a newer Hermes Agent, whose gateway is its only writer. Nothing was written; read it here, or write through that agent.",
    );
    this.name = "SchemaNewerError";
    this.path = path;
    this.fileVersion = fileVersion;
    this.supportedVersion = supportedVersion;
  }
}
