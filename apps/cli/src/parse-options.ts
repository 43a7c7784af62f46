import { type Command, Option } from "commander";
import { usageError } from "./cli-error.js";

/** Bounds of an integer option (both inclusive). */
export interface CountBounds {
  /** Default 0. */
  min?: number;
  /** Default `Number.MAX_SAFE_INTEGER`. */
  max?: number;
}

/**
 * Parses an integer option (`--limit 20`; commander passes the raw text): anything that is not
 * a whole number within `bounds` is a usage error (exit 2), the one check every such option has.
 */
export function parseCount(name: string, bounds: CountBounds = {}): (value: string) => number {
  const min = bounds.min ?? 0;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  return (value) => {
    if (!/^\d+$/.test(value.trim()))
      throw usageError(`${name} must be a non-negative integer, got '${value}'`);
    const n = Number(value.trim());
    if (n < min) throw usageError(`${name} must be at least ${min}, got ${n}`);
    if (n > max) throw usageError(`${name} must be at most ${max.toLocaleString("en-US")}, got '${value}'`);
    return n;
  };
}

/**
 * Adds `-n, --limit` (1 to `max`, default 20: a limit of 0 would print "nothing found" about
 * what was never looked at, so it is refused) and `--offset` to a command that pages.
 */
export function withPagingOptions(command: Command, what: string, max: number): Command {
  return command
    .option(
      "-n, --limit <n>",
      `at most this many ${what} (1–${max.toLocaleString("en-US")})`,
      parseCount("--limit", { min: 1, max }),
      20,
    )
    .option(`--offset <n>`, `skip this many ${what}`, parseCount("--offset"), 0);
}

/** Parses a non-negative number option (`--older-than 30`, `--older-than 0.5`). */
export function parseNumber(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value.trim());
    if (value.trim() === "" || !Number.isFinite(n) || n < 0) {
      throw usageError(`${name} must be a non-negative number, got '${value}'`);
    }
    return n;
  };
}

/** Collects a repeatable, comma-separated list option (`--source cli --source telegram,discord`). */
export function collectList(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return [...(previous ?? []), ...items];
}

/**
 * A repeatable, comma-separated list option whose items must be among `allowed`
 * (`--role user,tool`): anything else is a usage error that lists the choices.
 */
export function collectChoices(
  name: string,
  allowed: readonly string[],
): (value: string, previous: string[] | undefined) => string[] {
  return (value, previous) => {
    const items = collectList(value, undefined);
    const bad = items.filter((i) => !allowed.includes(i));
    if (bad.length > 0 || items.length === 0) {
      throw usageError(`${name} must be one of ${allowed.join(", ")} (comma-separated), got '${value}'`);
    }
    return [...(previous ?? []), ...items];
  };
}

/**
 * A repeatable, comma-separated list option of `allowed` values ({@link collectChoices});
 * the choices are also listed for help and shell completion.
 */
export function choiceListOption(flags: string, description: string, allowed: readonly string[]): Option {
  const option = new Option(flags, description).argParser(
    collectChoices(flags.replace(/^.*(--[\w-]+).*$/, "$1"), allowed),
  );
  option.argChoices = [...allowed];
  listOptions.add(option);
  return option;
}

const listOptions = new WeakSet<Option>();

/** The option takes a comma-separated list of its choices ({@link choiceListOption}). */
export function isChoiceList(option: Option): boolean {
  return listOptions.has(option);
}

/** Parses a date option: `YYYY-MM-DD`, an ISO timestamp, or a number of days ago (`7d`). */
export function parseSince(name: string): (value: string) => number {
  return (value) => {
    const v = value.trim();
    const days = /^(\d+(?:\.\d+)?)d$/.exec(v);
    if (days) return Date.now() / 1000 - Number(days[1]) * 86_400;
    const ms = Date.parse(v);
    if (Number.isNaN(ms))
      throw usageError(`${name} must be a date (2026-01-31) or an age (7d), got '${value}'`);
    return ms / 1000;
  };
}
