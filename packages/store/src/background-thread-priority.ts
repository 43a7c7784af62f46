import { setPriority } from "node:os";

/**
 * Nice value of the store's background threads (read workers, the side-index builder): the
 * caller's thread keeps the CPU when they compete for it (docs/design/read-pool.md, "What
 * blocks the caller's thread"). A thread's nice can be raised without privileges.
 */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the priority of the calling thread to {@link BACKGROUND_NICE}; returns whether it did.
 * Linux only: there `setpriority(PRIO_PROCESS, 0)` applies to the calling thread, while macOS
 * and Windows would lower the whole process, the caller's thread with it. A failure (a sandbox
 * refusing it) leaves the priority as it was; it never throws.
 */
export function lowerBackgroundThreadPriority(): boolean {
  if (process.platform !== "linux") return false;
  try {
    setPriority(BACKGROUND_NICE);
    return true;
  } catch {
    return false;
  }
}
