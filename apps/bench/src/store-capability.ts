/**
 * Several store methods land while the benchmarks are written. A missing method, or one that
 * still throws its "not implemented" placeholder, gives a "not available yet" row instead of a
 * figure.
 */
export function missingMethod(store: object, name: string): string | null {
  const value = (store as Record<string, unknown>)[name];
  return typeof value === "function" ? null : `not available yet: SessionStore.${name} does not exist`;
}

/** True when an error is the placeholder of an operation that is not written yet. */
export function isNotImplemented(error: unknown): boolean {
  return error instanceof Error && /not (yet )?implemented/i.test(error.message);
}

/** The row note for an error met while measuring our side. */
export function describeFailure(
  method: string,
  error: unknown,
): { status: "unavailable" | "error"; note: string } {
  if (isNotImplemented(error))
    return { status: "unavailable", note: `not available yet: ${method} is not implemented` };
  const message = error instanceof Error ? error.message : String(error);
  return { status: "error", note: `${method} failed: ${message.split("\n")[0]}` };
}
