/** A worker's report of an error: its code (or class name) and message, on one line. */
export function errorText(error: unknown): string {
  return error instanceof Error
    ? `${(error as { code?: string }).code ?? error.name}: ${error.message}`
    : String(error);
}
