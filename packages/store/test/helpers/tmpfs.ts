import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { tempDir } from "./temp-dir.js";

const mounted: string[] = [];
afterEach(() => {
  for (const dir of mounted.splice(0).reverse()) {
    try {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" });
    } catch {
      // already gone
    }
  }
});

/** Why a small tmpfs cannot be mounted here (not root, no mount permission), or `null`. */
export function tmpfsUnavailable(): string | null {
  if (process.platform !== "linux") return "tmpfs mounts need Linux";
  if (process.getuid?.() !== 0) return "mounting a tmpfs needs root";
  try {
    const probe = join(tempDir("hermes-probe-"), "m");
    mkdirSync(probe);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "ignore" });
    execFileSync("umount", [probe], { stdio: "ignore" });
    return null;
  } catch (error) {
    return `mount -t tmpfs failed: ${(error as Error).message.split("\n")[0]}`;
  }
}

/** Mounts a tmpfs of `size` (e.g. `2m`) on a fresh directory; unmounted after the test. */
export function mountTmpfs(size: string): string {
  const dir = join(tempDir("hermes-tmpfs-"), "mnt");
  mkdirSync(dir);
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir]);
  mounted.push(dir);
  return dir;
}

/** Remounts a tmpfs read-only. */
export function remountReadOnly(dir: string): void {
  execFileSync("mount", ["-o", "remount,ro", dir]);
}
