import { Option } from "commander";
import { usageError } from "./cli-error.js";

/** Parses a non-negative integer option (`--limit 20`); commander passes the raw text. */
export function parseCount(name: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim()))
      throw usageError(`${name} must be a non-negative integer, got '${value}'`);
    return Number(value.trim());
  };
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
  return option;
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
