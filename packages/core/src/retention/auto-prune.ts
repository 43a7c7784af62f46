import { stripPythonWhitespace } from "../conversation/python-whitespace.js";
import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import type { AutoPruneOptions, AutoPruneResult } from "../types.js";
import { optionsObject } from "../validation/arguments.js";
import { sessionsDirOf } from "./session-files.js";

/** The `state_meta` key that records the last automatic prune (epoch seconds as text). */
export const LAST_AUTO_PRUNE_KEY = "last_auto_prune";

/** A finite, non-negative number of days or hours, or the default when absent. */
export function nonNegativeDuration(name: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(name, `${name} must be a finite, non-negative number`);
  }
  return value;
}

// Python's `float()` on text: a sign, digits with single `_` between them, an optional fraction
// and exponent, or `inf`/`infinity`/`nan`, inside Python whitespace.
const DIGITS = String.raw`\d(?:_?\d)*`;
const PY_FLOAT = new RegExp(
  `^[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf(?:inity)?|nan)$`,
  "i",
);

/** `float(text)` as Python parses it, or `null` where Python raises `ValueError`. */
export function parsePythonFloat(text: string): number | null {
  const t = stripPythonWhitespace(text);
  if (!PY_FLOAT.test(t)) return null;
  const unsigned = t.replace(/^[+-]/, "").toLowerCase();
  const sign = t.startsWith("-") ? -1 : 1;
  if (unsigned === "nan") return Number.NaN;
  if (unsigned === "inf" || unsigned === "infinity") return sign * Number.POSITIVE_INFINITY;
  return Number(t.replace(/_/g, ""));
}

/** `str(x)` of a Python float for epoch timestamps: integral values keep a `.0`. */
export function pythonFloatText(value: number): string {
  return Number.isInteger(value) && Math.abs(value) < 1e16 ? `${value}.0` : String(value);
}

/** What {@link runAutoPrune} needs from a backend. */
export interface AutoPruneBackend {
  getMeta(key: string): Promise<string | null>;
  setMeta(key: string, value: string): Promise<void>;
  prune(o: { olderThanDays: number; sessionsDir?: string }): Promise<number>;
  vacuum(): Promise<void>;
  now(): number;
}

/**
 * The startup housekeeping of `maybeAutoPruneAndVacuum`, the same on every backend: prunes ended
 * sessions older than `retentionDays` (default 90) and, when something was pruned and `vacuum`
 * is not `false`, vacuums — at most once per `minIntervalHours` (default 24), across processes,
 * as recorded in the meta key {@link LAST_AUTO_PRUNE_KEY}. Never throws: failures come back in
 * `error`.
 *
 * `last_auto_prune` semantics are the reference's: a value that does not parse as a float is
 * treated as absent; the time is recorded after every run that got past pruning, even when
 * nothing was pruned (so restarts within the interval do not rescan); a failed vacuum is not an
 * error (the prune stands); a failed prune records nothing.
 */
export async function runAutoPrune(
  backend: AutoPruneBackend,
  o?: AutoPruneOptions,
): Promise<AutoPruneResult> {
  const result: AutoPruneResult = { skipped: false, pruned: 0, vacuumed: false };
  try {
    const opts = optionsObject("options", o);
    const retentionDays = nonNegativeDuration("retentionDays", opts.retentionDays, 90);
    const minIntervalHours = nonNegativeDuration("minIntervalHours", opts.minIntervalHours, 24);
    if (opts.vacuum !== undefined && typeof opts.vacuum !== "boolean") {
      throw new InvalidArgumentError("vacuum", "vacuum must be a boolean");
    }
    const sessionsDir = sessionsDirOf(opts.sessionsDir);

    const lastRaw = await backend.getMeta(LAST_AUTO_PRUNE_KEY);
    const now = backend.now();
    if (lastRaw) {
      const last = parsePythonFloat(lastRaw);
      // NaN compares false, so a stored "nan" never skips (as in the reference).
      if (last !== null && now - last < minIntervalHours * 3600) {
        result.skipped = true;
        return result;
      }
    }
    result.pruned = await backend.prune({
      olderThanDays: retentionDays,
      ...(sessionsDir === null ? {} : { sessionsDir }),
    });
    if (opts.vacuum !== false && result.pruned > 0) {
      try {
        await backend.vacuum();
        result.vacuumed = true;
      } catch {
        // Space is reclaimed next time; the prune itself is committed and stands.
      }
    }
    await backend.setMeta(LAST_AUTO_PRUNE_KEY, pythonFloatText(now));
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
  }
  return result;
}
