import { AbortedError, InvalidArgumentError } from "../errors/hermes-store-error.js";

/** Largest `limit` a listing or search accepts (a larger one is a mistake or an abuse). */
export const MAX_LIMIT = 100_000;

/**
 * Longest text value accepted in one field (16 Mi UTF-16 code units, about 16–48 MB of UTF-8).
 * Larger values are almost always a mistake (a binary blob, a runaway tool output) and would
 * hold the write lock for seconds while the search index takes them in.
 */
export const MAX_TEXT_LENGTH = 16 * 1024 * 1024;

// A lone UTF-16 surrogate cannot be encoded as UTF-8: SQLite would store U+FFFD instead,
// silently changing the text, so it is refused.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkText(name: string, value: string): string {
  if (value.length > MAX_TEXT_LENGTH) {
    throw new InvalidArgumentError(
      name,
      `${name} is too long (${value.length} UTF-16 units, max ${MAX_TEXT_LENGTH})`,
    );
  }
  if (LONE_SURROGATE.test(value)) {
    throw new InvalidArgumentError(name, `${name} contains a lone UTF-16 surrogate (not valid Unicode)`);
  }
  return value;
}

/** A non-empty string, e.g. a session id or a role. */
export function requireId(name: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new InvalidArgumentError(name, `${name} must be a non-empty string (got ${describe(value)})`);
  }
  if (value.includes("\0")) {
    throw new InvalidArgumentError(name, `${name} must not contain NUL characters`);
  }
  return checkText(name, value);
}

/** A string or `null`/`undefined` (returned as `null`). */
export function optionalString(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") {
    throw new InvalidArgumentError(name, `${name} must be a string or null (got ${describe(value)})`);
  }
  return checkText(name, value);
}

/** A finite number or `null`/`undefined` (returned as `null`). */
export function optionalNumber(name: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidArgumentError(name, `${name} must be a finite number (got ${describe(value)})`);
  }
  return value;
}

/** A non-negative integer up to `max`, or the default when absent. */
export function nonNegativeInt(
  name: string,
  value: unknown,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(name, `${name} must be a non-negative integer (got ${describe(value)})`);
  }
  if (value > max) {
    throw new InvalidArgumentError(name, `${name} must be at most ${max} (got ${value})`);
  }
  return value;
}

/** An integer counter that may be negative (token deltas), or `fallback` (0) when absent. */
export function integerDelta(name: string, value: unknown, fallback = 0): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw new InvalidArgumentError(name, `${name} must be an integer (got ${describe(value)})`);
  }
  return value;
}

/** An array of strings, or `null` when absent. */
export function optionalStringArray(name: string, value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new InvalidArgumentError(name, `${name} must be an array of strings`);
  }
  return value as string[];
}

/** A boolean option, or `fallback` when absent. */
export function optionalBoolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") throw new InvalidArgumentError(name, `${name} must be a boolean`);
  return value;
}

/** A plain options object, or `{}` when absent. */
export function optionsObject<T extends object>(name: string, value: T | undefined | null): Partial<T> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidArgumentError(name, `${name} must be an object`);
  }
  return value;
}

/** An optional `AbortSignal` option, or `INVALID_ARGUMENT`. */
export function optionalSignal(value: unknown): AbortSignal | undefined {
  if (value === undefined || value === null) return undefined;
  if (!(value instanceof AbortSignal))
    throw new InvalidArgumentError("signal", "signal must be an AbortSignal");
  return value;
}

/** Rejects with `ABORTED` when `signal` has aborted (the call then does nothing). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError();
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length === 0 ? "an empty string" : "a string";
  return typeof value;
}
