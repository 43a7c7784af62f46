import { InvalidArgumentError } from "./errors.js";

/** Largest `limit` a listing or search accepts (a larger one is a mistake or an abuse). */
export const MAX_LIMIT = 100_000;

/** A non-empty string, e.g. a session id or a role. */
export function requireId(name: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new InvalidArgumentError(name, `${name} must be a non-empty string (got ${describe(value)})`);
  }
  if (value.includes("\0")) {
    throw new InvalidArgumentError(name, `${name} must not contain NUL characters`);
  }
  return value;
}

/** A string or `null`/`undefined` (returned as `null`). */
export function optionalString(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") {
    throw new InvalidArgumentError(name, `${name} must be a string or null (got ${describe(value)})`);
  }
  return value;
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

/** An integer counter that may be negative (token deltas), or 0 when absent. */
export function integer(name: string, value: unknown, fallback = 0): number {
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

/** A plain options object, or `{}` when absent. */
export function options<T extends object>(name: string, value: T | undefined | null): Partial<T> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidArgumentError(name, `${name} must be an object`);
  }
  return value;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length === 0 ? "an empty string" : "a string";
  return typeof value;
}
