import { ApiError } from "../api.js";

/** A failed request as one sentence in the page (never an error page). */
export function ErrorNote({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const message =
    error instanceof ApiError
      ? error.message
      : error instanceof Error
        ? `The server could not be reached (${error.message})`
        : String(error);
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}
