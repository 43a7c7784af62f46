// Placeholders for the non-finite numbers while JSON.parse runs. A NUL and a noncharacter make a
// collision with a real string value practically impossible.
const NAN = "\u0000\uffffNaN";
const POS_INF = "\u0000\uffffInfinity";
const NEG_INF = "\u0000\uffff-Infinity";
const TOKENS: ReadonlyArray<readonly [string, string]> = [
  ["-Infinity", NEG_INF],
  ["Infinity", POS_INF],
  ["NaN", NAN],
];

function revive(_key: string, value: unknown): unknown {
  if (value === NAN) return Number.NaN;
  if (value === POS_INF) return Number.POSITIVE_INFINITY;
  if (value === NEG_INF) return Number.NEGATIVE_INFINITY;
  return value;
}

/** `text` with bare `NaN`/`Infinity`/`-Infinity` (outside strings) quoted as placeholders. */
function quoteNonFinite(text: string): string | null {
  let out = "";
  let last = 0;
  let found = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      // Skip the string, escapes included.
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      continue;
    }
    for (const [token, placeholder] of TOKENS) {
      if (text.startsWith(token, i)) {
        out += `${text.slice(last, i)}${JSON.stringify(placeholder)}`;
        i += token.length - 1;
        last = i + 1;
        found = true;
        break;
      }
    }
  }
  return found ? out + text.slice(last) : null;
}

/**
 * Parses JSON as Python's `json.loads` does: standard JSON plus the `NaN`, `Infinity` and
 * `-Infinity` that Python's `json.dumps` writes for non-finite floats, so a row the reference
 * wrote and can read back is readable here too. Throws `SyntaxError` on anything else invalid.
 *
 * @example parsePythonJson('[1, NaN, -Infinity]') // [1, NaN, -Infinity]
 */
export function parsePythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // Only the rare failing text pays for the second pass.
    const quoted = /NaN|Infinity/.test(text) ? quoteNonFinite(text) : null;
    if (quoted === null) throw error;
    return JSON.parse(quoted, revive);
  }
}
