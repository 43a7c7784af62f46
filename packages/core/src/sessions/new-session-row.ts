import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import type { CreateSessionInput, SessionRow } from "../types.js";
import { optionalString, optionsObject, requireId } from "../validation/arguments.js";

/**
 * JSON text of a value when it is "truthy" in the reference's sense (non-empty), else `null`:
 * the reference writes `json.dumps(v) if v else None`, so `{}`, `[]`, `""`, `0` store NULL.
 */
export function jsonIfTruthy(value: unknown): string | null {
  if (value === undefined || value === null || value === false || value === 0 || value === "") return null;
  if (Array.isArray(value) && value.length === 0) return null;
  if (typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0) return null;
  return JSON.stringify(value);
}

/** The columns `createSession` writes, but `started_at` (see {@link newSessionRow}). */
export type NewSessionRow = Pick<
  SessionRow,
  "id" | "source" | "user_id" | "model" | "model_config" | "system_prompt" | "parent_session_id"
>;

/**
 * The row `createSession` inserts (all but `started_at`), from its checked input: `INVALID_ARGUMENT`
 * for bad ids, a `modelConfig` that is not an object or cannot be stored as JSON.
 */
export function newSessionRow(input: CreateSessionInput): NewSessionRow {
  const s = optionsObject("session", input);
  const id = requireId("id", s.id);
  const source = requireId("source", s.source);
  const parent = optionalString("parentSessionId", s.parentSessionId);
  if (
    s.modelConfig !== undefined &&
    s.modelConfig !== null &&
    (typeof s.modelConfig !== "object" || Array.isArray(s.modelConfig))
  ) {
    throw new InvalidArgumentError("modelConfig", "modelConfig must be an object or null");
  }
  let modelConfig: string | null;
  try {
    modelConfig = jsonIfTruthy(s.modelConfig);
  } catch (error) {
    // Cycles and BigInt: refuse before any write rather than fail inside the transaction.
    throw new InvalidArgumentError(
      "modelConfig",
      `modelConfig cannot be stored as JSON: ${(error as Error).message}`,
    );
  }
  return {
    id,
    source,
    user_id: optionalString("userId", s.userId),
    model: optionalString("model", s.model),
    model_config: modelConfig,
    system_prompt: optionalString("systemPrompt", s.systemPrompt),
    parent_session_id: parent,
  };
}
