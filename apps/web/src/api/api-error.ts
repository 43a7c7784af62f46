import { HermesStoreError } from "@hermes/core";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ErrorAnswer } from "./api-answers.js";

const STATUS: Record<string, 400 | 404 | 409 | 503> = {
  INVALID_ARGUMENT: 400,
  TITLE_TOO_LONG: 400,
  TITLE_CONFLICT: 409,
  SESSION_NOT_FOUND: 404,
  STORE_BUSY: 503,
};

/** A 400 answer for a malformed query parameter. */
export function badRequest(message: string): HTTPException {
  return new HTTPException(400, {
    res: Response.json({ error: "INVALID_ARGUMENT", message } satisfies ErrorAnswer, { status: 400 }),
  });
}

/** A 404 answer. */
export function notFound(message: string): HTTPException {
  return new HTTPException(404, {
    res: Response.json({ error: "NOT_FOUND", message } satisfies ErrorAnswer, { status: 404 }),
  });
}

/**
 * Every error as JSON `{ error, message }`: store errors with their code and a status that
 * fits it, anything unexpected as a 500 without details (logged on the server's stderr).
 */
export function errorResponse(error: unknown, c: Context): Response {
  if (error instanceof HTTPException) return error.getResponse();
  if (error instanceof HermesStoreError) {
    const status = STATUS[error.code] ?? 500;
    if (status !== 500)
      return c.json({ error: error.code, message: error.message } satisfies ErrorAnswer, status);
  }
  process.stderr.write(
    `hermes-sessions serve: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return c.json(
    { error: "INTERNAL", message: "The server could not answer this request" } satisfies ErrorAnswer,
    500,
  );
}
