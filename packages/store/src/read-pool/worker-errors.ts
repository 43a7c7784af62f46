import * as core from "@hermes/core";
import { HermesStoreError } from "@hermes/core";
import type { SerializedError } from "./read-methods.js";

/** An error thrown in a worker, as plain data (its class by name, its `code`, its cause's code). */
export function serializeError(error: unknown): SerializedError {
  const e = error instanceof Error ? error : new Error(String(error));
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) {
    if (k !== "cause" && (v === null || ["string", "number", "boolean"].includes(typeof v))) props[k] = v;
  }
  const out: SerializedError = { name: e.name, message: e.message, props };
  const cause = e.cause;
  if (cause instanceof Error) {
    out.cause = { name: cause.name, message: cause.message, code: (cause as { code?: unknown }).code };
  }
  return out;
}

const BUILT_IN: Record<string, ErrorConstructor> = { TypeError, RangeError, SyntaxError, Error };

/**
 * Rebuilds a worker's error (from `where`, for its stack) as core's class of the same name (so `instanceof` and `code` hold),
 * or the built-in error of that name; a SQLite cause keeps its `code` (the corruption guard reads it).
 */
export function reviveError(data: SerializedError, where = "read worker"): Error {
  const cls = (core as Record<string, unknown>)[data.name];
  const proto =
    typeof cls === "function" && cls.prototype instanceof HermesStoreError
      ? (cls.prototype as object)
      : (BUILT_IN[data.name] ?? Error).prototype;
  const error = Object.create(proto) as Error;
  Object.defineProperty(error, "message", { value: data.message, writable: true, configurable: true });
  Object.assign(error, data.props);
  if (data.cause !== undefined) {
    const cause = Object.assign(new Error(data.cause.message), {
      name: data.cause.name,
      code: data.cause.code,
    });
    Object.defineProperty(error, "cause", { value: cause, writable: true, configurable: true });
  }
  Object.defineProperty(error, "stack", {
    value: `${data.name}: ${data.message}\n    at ${where}`,
    writable: true,
    configurable: true,
  });
  return error;
}
