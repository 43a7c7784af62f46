import type { Context } from "hono";
import { badRequest } from "./api-error.js";

/** All values of a repeatable parameter (`?source=a&source=b` or `?source=a,b`), empty ones dropped. */
export function list(c: Context, name: string): string[] | undefined {
  const values = (c.req.queries(name) ?? []).flatMap((v) => v.split(",")).filter((v) => v !== "");
  return values.length === 0 ? undefined : values;
}

/** An integer parameter within bounds, or `undefined` when absent. */
export function int(c: Context, name: string, min: number, max: number): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw badRequest(`${name} must be an integer from ${min} to ${max}`);
  }
  return n;
}

/** A date (`YYYY-MM-DD`, UTC) or epoch-seconds parameter as epoch seconds; `endOfDay` moves a date to its end. */
export function time(c: Context, name: string, endOfDay = false): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === "") return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) {
    const ms = Date.parse(`${raw}T00:00:00Z`);
    if (!Number.isNaN(ms)) return ms / 1000 + (endOfDay ? 86_400 : 0);
  } else if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw);
  throw badRequest(`${name} must be a date (YYYY-MM-DD) or epoch seconds`);
}

/** A string parameter, or `undefined` when absent or empty. */
export function text(c: Context, name: string, maxLength = 1000): string | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === "") return undefined;
  if (raw.length > maxLength) throw badRequest(`${name} is longer than ${maxLength} characters`);
  return raw;
}
