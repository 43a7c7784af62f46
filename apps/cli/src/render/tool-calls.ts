/** A tool call reduced to what a reader needs. */
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
