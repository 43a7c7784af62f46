import { HermesStoreError } from "@hermes/core";
import type { FileHolder } from "./find-holders.js";

/**
 * A restore refused (`TARGET_IN_USE`) because a process holds the database it would replace:
 * swapping a file under a live SQLite connection loses that process's later writes (or tears
 * the file). The target was left untouched.
 */
export class TargetInUseError extends HermesStoreError {
  /** The database file that would have been replaced. */
  readonly target: string;
  /** Who holds it, and which check found each. */
  readonly holders: readonly FileHolder[];
  constructor(target: string, holders: readonly FileHolder[]) {
    const who = holders.map(
      (h) =>
        `${h.pid === null ? "a process" : `pid ${h.pid}`}${h.command ? ` (${h.command})` : ""} found by ${h.check}`,
    );
    super(
      "TARGET_IN_USE",
      `Refusing to restore ${target}: it is in use, ${who.join(", ")}. ` +
        "Stop the Hermes agent (its gateway and any running `hermes` session) and every other tool that has the file open, then retry; nothing was changed.",
    );
    this.name = "TargetInUseError";
    this.target = target;
    this.holders = holders;
  }
}
