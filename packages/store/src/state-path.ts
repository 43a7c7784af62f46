import { homedir } from "node:os";
import { isAbsolute, join, normalize, resolve } from "node:path";
import { UnsafePathError } from "@hermes/core";

/**
 * Where `state.db` lives: `$HERMES_HOME/state.db`, else `~/.hermes/state.db`.
 * Read at call time (not at import time), so a change of `HERMES_HOME` takes effect on the
 * next open.
 *
 * @throws UnsafePathError when `HERMES_HOME` holds a NUL byte or is not absolute after `~`
 *   expansion, or has `..` segments (a relative home would depend on each process's working
 *   directory).
 */
export function resolveStatePath(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env.HERMES_HOME;
  if (raw === undefined || raw.trim() === "") return join(homedir(), ".hermes", "state.db");
  if (raw.includes("\0")) {
    throw new UnsafePathError(raw, "HERMES_HOME contains a NUL byte");
  }
  if (raw.split(/[\\/]/).includes("..")) {
    throw new UnsafePathError(raw, `HERMES_HOME must not contain '..' segments (got '${raw}')`);
  }
  const expanded = raw === "~" || raw.startsWith("~/") ? join(homedir(), raw.slice(1)) : raw;
  if (!isAbsolute(expanded)) {
    throw new UnsafePathError(
      raw,
      `HERMES_HOME must be an absolute path (got '${raw}'); relative homes differ per process`,
    );
  }
  return join(resolve(normalize(expanded)), "state.db");
}
