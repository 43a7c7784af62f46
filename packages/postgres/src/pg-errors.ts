import { BackendError, HermesStoreError, InvalidArgumentError, SessionNotFoundError } from "@hermes/core";

const sqlState = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null ? ((error as { code?: unknown }).code as string) : undefined;

/** Serialization failures and deadlocks: the transaction is retried. */
export function isRetryable(error: unknown): boolean {
  const code = sqlState(error);
  return code === "40001" || code === "40P01";
}

/**
 * A PostgreSQL error as the store's typed errors where there is an equivalent; any other server
 * error (one with a SQLSTATE) as `BACKEND_ERROR`, its SQLSTATE in `backendCode`.
 */
export function mapPgError(error: unknown): unknown {
  if (error instanceof HermesStoreError) return error;
  const code = sqlState(error);
  if (code === "22021" || code === "22P05" || code === "54000") {
    return new InvalidArgumentError("value", `PostgreSQL refused a value: ${(error as Error).message}`);
  }
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    return new BackendError(`PostgreSQL error ${code}: ${(error as Error).message}`, {
      cause: error,
      backendCode: code,
    });
  }
  return error;
}

/** A foreign-key failure naming the session the caller asked for. */
export function foreignKeyToNotFound(error: unknown, sessionId: string, what: string): unknown {
  if (sqlState(error) === "23503") {
    return new SessionNotFoundError(sessionId, `${what}: session ${sessionId} does not exist`, {
      cause: error,
    });
  }
  return error;
}

/** Whether `error` is a unique violation of `constraint`. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  return sqlState(error) === "23505" && (error as { constraint?: string }).constraint === constraint;
}
