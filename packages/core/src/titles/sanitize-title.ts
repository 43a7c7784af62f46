import { InvalidArgumentError, TitleTooLongError } from "../errors/hermes-store-error.js";

/** Longest title, in code points, after sanitizing. */
export const MAX_TITLE_LENGTH = 100;

// C0 controls except tab, LF and CR; DEL. Then invisible format characters that make two
// titles look alike: zero-width and direction marks, line/paragraph separators, bidi
// embeddings and isolates, word joiner, BOM, interlinear annotations, object replacement.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const INVISIBLE = /[\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\ufffc]/g;
// Python's `\s` (str.isspace): JavaScript's `\s` lacks U+001C–U+001F and U+0085 and has U+FEFF.
const WHITESPACE_RUN =
  /[\t\n\v\f\r\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;

/**
 * Cleans a session title as the reference does: removes control and invisible formatting
 * characters, collapses every whitespace run to one space and trims. Empty → `null`.
 *
 * @throws TitleTooLongError (`TITLE_TOO_LONG`) above {@link MAX_TITLE_LENGTH} code points.
 * @example sanitizeTitle("  Fix\u200b  Docker\tbuild ") // "Fix Docker build"
 */
export function sanitizeTitle(title: string | null | undefined): string | null {
  if (title === null || title === undefined || title === "") return null;
  if (typeof title !== "string") {
    throw new InvalidArgumentError("title", "title must be a string or null");
  }
  const cleaned = title
    .replace(CONTROL, "")
    .replace(INVISIBLE, "")
    .replace(WHITESPACE_RUN, " ")
    .replace(/^ | $/g, "");
  if (cleaned === "") return null;
  const length = [...cleaned].length;
  if (length > MAX_TITLE_LENGTH) throw new TitleTooLongError(length, MAX_TITLE_LENGTH);
  return cleaned;
}
