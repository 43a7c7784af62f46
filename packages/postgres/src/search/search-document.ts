/**
 * The text pg_trgm indexes and substring search reads: a message's content, tool calls and tool
 * name joined, on the columns of `alias` (none: unqualified, as in an index definition). The
 * index and the queries must state the same expression for the planner to match them.
 */
export function searchDocumentSql(alias = ""): string {
  const c = alias === "" ? "" : `${alias}.`;
  return `(COALESCE(${c}content, '') || ' ' || COALESCE(${c}tool_calls, '') || ' ' || COALESCE(${c}tool_name, ''))`;
}
