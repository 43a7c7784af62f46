/** A tool call reduced to what a reader needs (see {@link toolCallsOf}). */
export interface ToolCallView {
  id: string | null;
  name: string;
  arguments: string;
}

/**
 * Reads the tool calls of a message whatever their shape (OpenAI `{ id, function: { name,
 * arguments } }`, a flat `{ name, arguments|input }`, or a single object); a malformed value
 * from another writer never breaks rendering.
 */
export function toolCallsOf(value: unknown): ToolCallView[] {
  if (value === null || value === undefined || value === "") return [];
  // Exports carry `tool_calls` as the stored JSON text.
  if (typeof value === "string") {
    try {
      return toolCallsOf(JSON.parse(value) as unknown);
    } catch {
      return [{ id: null, name: "?", arguments: value }];
    }
  }
  const list = Array.isArray(value) ? value : [value];
  return list.map((item): ToolCallView => {
    if (typeof item !== "object" || item === null) return { id: null, name: "?", arguments: String(item) };
    const rec = item as Record<string, unknown>;
    const fn = (typeof rec.function === "object" && rec.function !== null ? rec.function : rec) as Record<
      string,
      unknown
    >;
    const args = fn.arguments ?? fn.input ?? "";
    return {
      id: typeof rec.id === "string" ? rec.id : null,
      name: typeof fn.name === "string" ? fn.name : "?",
      arguments: typeof args === "string" ? args : JSON.stringify(args),
    };
  });
}

/** `name(arguments)`, as a conversation prints a call (the CLI's `show`, a search hit). */
export function formatToolCall(call: ToolCallView): string {
  return `${call.name}(${call.arguments})`;
}

const ELLIPSIS = "...";
const CALL_KEYS = /"(?:function|arguments|name)"\s*:/;

/**
 * A search snippet cut from a message's `tool_calls` JSON, rendered as a conversation renders
 * calls (`terminal({"cmd": "docker build ."})`) instead of escaped JSON: the CLI's `search`
 * (every output but `--json`) and the web's search results use it. A whole value is parsed; a
 * snippet cut at either end (FTS5 marks the cut with `...`) is read as far as it goes. Match
 * markers (`>>>`, `<<<`) are plain text inside the JSON strings and survive. Any other snippet
 * is returned as it is.
 */
export function renderToolCallSnippet(snippet: string): string {
  if (!CALL_KEYS.test(snippet)) return snippet;
  const head = snippet.startsWith(ELLIPSIS);
  const tail = snippet.endsWith(ELLIPSIS);
  const body = snippet.slice(head ? ELLIPSIS.length : 0, tail ? -ELLIPSIS.length : undefined);
  if (!head && !tail) {
    try {
      const calls = toolCallsOf(JSON.parse(body) as unknown);
      if (calls.length > 0 && calls.every((c) => c.name !== "?")) return calls.map(formatToolCall).join(", ");
    } catch {
      // Not one JSON value after all: read it piece by piece below.
    }
  }
  const name = /"name"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(body)?.[1];
  const args = /"arguments"\s*:\s*"((?:[^"\\]|\\.)*)("?)/.exec(body);
  if (args === null) return `${head ? "…" : ""}${name === undefined ? body : `${unescapeJson(name)}(…)`}`;
  const text = unescapeJson(args[1] ?? "");
  const closed = args[2] === '"';
  return `${head && name === undefined ? "…" : ""}${name === undefined ? "" : unescapeJson(name)}(${text}${closed ? ")" : "…"}`;
}

/** The text of a JSON string body (escapes resolved), even when cut in the middle of one. */
function unescapeJson(body: string): string {
  try {
    return JSON.parse(`"${body.replace(/\\u[0-9a-fA-F]{0,3}$|\\$/, "")}"`) as string;
  } catch {
    return body
      .replace(/\\(["\\/])/g, "$1")
      .replace(/\\n/g, "\n")
      .replace(/\\t/g, "\t");
  }
}
