import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The built `hermes-sessions` of the workspace's `@hermes/cli` (its manifest's `bin`). */
export function cliMain(): string {
  const manifest = createRequire(import.meta.url).resolve("@hermes/cli/package.json");
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: Record<string, string> };
  return join(dirname(manifest), bin["hermes-sessions"]!);
}
