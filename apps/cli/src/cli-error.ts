import { HermesStoreError } from "@hermes/store";

/** Exit codes of `hermes-sessions`. */
export const EXIT = {
  /** Success. */
  ok: 0,
  /** The command failed (unknown session, store error, failed check). */
  failure: 1,
  /** Bad usage: unknown flag, missing or malformed argument. */
  usage: 2,
} as const;

/**
 * An error the CLI reports as one line on stderr, with an exit code. Anything else that
 * escapes a command is reported the same way, but with exit code 1.
 */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number = EXIT.failure, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

/** A malformed argument or option value (exit code 2). */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/** The one line an error becomes on stderr (the first line of its message). */
export function errorLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split("\n").find((l) => l.trim() !== "") ?? "unknown error";
  return error instanceof HermesStoreError ? `${first} [${error.code}]` : first;
}
