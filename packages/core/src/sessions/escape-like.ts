/**
 * Escapes `\`, `%` and `_` for a `LIKE … ESCAPE '\'` pattern, so an id prefix or a title matches
 * literally (SQLite and PostgreSQL read the escape the same way).
 *
 * @example `${escapeLike("50%_off")}%` // "50\\%\\_off%"
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
