import { randomBytes } from "node:crypto";
import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import { sanitizeTitle } from "../titles/sanitize-title.js";
import { optionalString, optionsObject, requireId } from "../validation/arguments.js";

/** Options of `forkSession`. */
export interface ForkSessionOptions {
  /** Last message copied (inclusive, in conversation order); default: every message. */
  atMessageId?: number;
  /** Id of the new session; default a fresh `YYYYMMDD_HHMMSS_xxxxxx` id like the reference's. */
  newId?: string;
  /**
   * Title of the fork. Default: the next title in the parent's lineage (`X` → `X #2`, as
   * `getNextTitleInLineage`), or none when the parent has no title.
   */
  title?: string | null;
}

/** A session id in the reference's shape: local `YYYYMMDD_HHMMSS_` + 6 hex digits. */
export function newSessionId(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}_${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  return `${stamp}_${randomBytes(3).toString("hex")}`;
}

/**
 * Checks the arguments of `forkSession` (`INVALID_ARGUMENT`, `TITLE_TOO_LONG`): the parent id, the
 * `atMessageId` fork point, the requested `newId` (`null`: generated) and the explicit title
 * (`undefined`: the lineage's next title; `null`: none).
 */
export function forkArguments(
  id: unknown,
  o: ForkSessionOptions | undefined,
): {
  parentId: string;
  at: number | undefined;
  requestedId: string | null;
  explicitTitle: string | null | undefined;
} {
  const parentId = requireId("id", id);
  const opts = optionsObject("options", o);
  const at = opts.atMessageId;
  if (at !== undefined && (typeof at !== "number" || !Number.isSafeInteger(at) || at <= 0)) {
    throw new InvalidArgumentError("atMessageId", "atMessageId must be a positive integer");
  }
  const requestedId = opts.newId === undefined ? null : requireId("newId", opts.newId);
  const explicitTitle =
    opts.title === undefined ? undefined : sanitizeTitle(optionalString("title", opts.title));
  return { parentId, at, requestedId, explicitTitle };
}
