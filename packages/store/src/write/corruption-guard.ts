import { StoreCorruptError } from "@hermes/core";
import { isFileCorruption } from "../sqlite-errors.js";

/**
 * Remembers the first error that showed the database file itself damaged (`SQLITE_CORRUPT`, not
 * a search index). From then on nothing is written or checkpointed: a write or a checkpoint
 * could overwrite pages that a recovery tool can still read.
 */
export class CorruptionGuard {
  readonly #path: string;
  #corruption: unknown;

  constructor(path: string) {
    this.#path = path;
  }

  /** Whether a damaged database file was seen; then writes and checkpoints are refused. */
  get corrupted(): boolean {
    return this.#corruption !== undefined;
  }

  /**
   * Records `error` if it shows the database file damaged (reads report theirs here too), so
   * that no later write or checkpoint touches the file. Other errors are ignored.
   */
  noteError(error: unknown): void {
    if (this.#corruption !== undefined) return;
    const cause = error instanceof StoreCorruptError ? (error.cause ?? error) : error;
    if (isFileCorruption(cause)) this.#corruption = cause;
  }

  /** The error a write gets once the file was found damaged. */
  refusal(): StoreCorruptError {
    return new StoreCorruptError(
      this.#path,
      `The database ${this.#path} was found damaged earlier; this store writes nothing more to it ` +
        "(a write or checkpoint could overwrite what a recovery can still read). Keep a copy of the " +
        "file and run 'hermes-sessions doctor'.",
      { cause: this.#corruption },
    );
  }
}
