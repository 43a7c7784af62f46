import { isPythonWhitespace } from "../conversation/python-whitespace.js";

const PREVIEW_CHARS = 60;

/**
 * The reference's session preview from the first user message as a backend cuts it (CR/LF
 * turned into spaces, the first 63 characters): Python `strip()`, then the first 60 code points
 * plus "..." when more remained. Bytes (a BLOB a foreign writer stored) are read as UTF-8.
 *
 * @example previewOf("  hello world  ") // "hello world"
 */
export function previewOf(raw: unknown): string {
  const text =
    typeof raw === "string"
      ? raw
      : raw instanceof Uint8Array
        ? Buffer.from(raw).toString("utf8")
        : String(raw ?? "");
  let start = 0;
  let end = text.length;
  while (start < end && isPythonWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isPythonWhitespace(text.charCodeAt(end - 1))) end--;
  // Walk code points (a surrogate pair is one) up to the 60th.
  let i = start;
  let points = 0;
  while (i < end && points < PREVIEW_CHARS) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < end && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    i += pair ? 2 : 1;
    points++;
  }
  return i < end ? `${text.slice(start, i)}...` : text.slice(start, end);
}

/**
 * Columns a compression root shows of its tip in `listSessionsRich` (with
 * `projectCompressionTips`): the live conversation's identity and activity.
 */
export const TIP_FIELDS = [
  "id",
  "ended_at",
  "end_reason",
  "message_count",
  "tool_call_count",
  "title",
  "last_active",
  "preview",
  "model",
  "system_prompt",
] as const;
