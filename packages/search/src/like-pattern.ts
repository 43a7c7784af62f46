/** The reference's `LIKE` pattern for `raw`: `%raw%` with `\`, `%`, `_` escaped by `\`. */
export function likePattern(raw: string): string {
  return `%${raw.replace(/\\/g, "\\\\").replace(/%/g, "\\%").replace(/_/g, "\\_")}%`;
}
