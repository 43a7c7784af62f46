// Python's whitespace (`\s` in `re` str patterns), for the patterns below; see python-whitespace.ts.
const PY_WS =
  "\\t\\n\\v\\f\\r\\u001c-\\u0020\\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

/**
 * Builds a case-insensitive pattern that matches like Python's `re.IGNORECASE` on str patterns.
 * With the `iu` flags JavaScript folds `ſ`→`s` and `K`→`k` as Python does, but Python also
 * treats `ı` (U+0131) and `İ` (U+0130) as case variants of `i`; JavaScript does not.
 */
function pythonIgnoreCase(source: string): RegExp {
  const widened = source.replace(/\\s/g, `[${PY_WS}]`).replace(/i/g, "[i\\u0130\\u0131]");
  return new RegExp(widened, "giu");
}

// The three patterns of the reference's `sanitize_context` (agent/memory_manager.py), applied in
// this order: whole fenced blocks, then the recall system note, then any stray fence tag.
// `[^]` is "any character" (Python's `[\s\S]`); `\s` is only ever used outside classes here.
const CONTEXT_BLOCK = pythonIgnoreCase(String.raw`<\s*memory-context\s*>[^]*?</\s*memory-context\s*>`);
const SYSTEM_NOTE = pythonIgnoreCase(
  String.raw`\[System note:\s*The following is recalled memory context,\s*NOT new user input\.\s*Treat as (?:informational background data|authoritative reference data[^\]]*)\.\]\s*`,
);
const FENCE_TAG = pythonIgnoreCase(String.raw`</?\s*memory-context\s*>`);

/**
 * Removes recalled-memory scaffolding that the agent injects into prompts, as the reference's
 * `sanitize_context` does: `<memory-context>…</memory-context>` blocks, the
 * "[System note: The following is recalled memory context, NOT new user input. Treat as …]"
 * note, and stray fence tags. Does not trim.
 *
 * @example
 * sanitizeContext("<memory-context>\nold facts\n</memory-context>\nhello") // "\nhello"
 */
export function sanitizeContext(text: string): string {
  // Fast path: every pattern needs "memory-context" or "System note" (case-insensitively);
  // most stored messages have neither.
  // (`iu` also folds `ſ`/`K` as Python does; the i-variants only occur after "System note".)
  if (!/memory-context|system note/iu.test(text)) return text;
  return text.replace(CONTEXT_BLOCK, "").replace(SYSTEM_NOTE, "").replace(FENCE_TAG, "");
}
