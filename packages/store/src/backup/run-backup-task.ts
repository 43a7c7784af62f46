import { statSync } from "node:fs";
import { startThread } from "../threads/start-thread.js";
import type { SnapshotCheck } from "./check-snapshot.js";

/** @internal What the backup thread is asked: a snapshot of `source` into `dest` then its check, or a check alone. */
export type BackupTask =
  | {
      readonly kind: "snapshot";
      readonly source: string;
      readonly dest: string;
      readonly busyTimeoutMs: number;
    }
  | { readonly kind: "check"; readonly path: string };

/** @internal Its answer. */
export type BackupTaskReply =
  | {
      readonly ok: true;
      readonly check: SnapshotCheck;
      readonly snapshotMs: number;
      readonly checkMs: number;
    }
  | { readonly ok: false; readonly code: string | undefined; readonly message: string };

/**
 * Runs one task on a backup thread. While it runs, `onBytes` is told every 100 ms how large
 * `watch` (the file being written) has grown: the snapshot is one SQLite call, so the size of
 * its output is the only progress there is to show.
 */
export function runBackupTask(
  task: BackupTask,
  watch?: { path: string; onBytes: (bytes: number) => void },
): Promise<BackupTaskReply> {
  return new Promise((resolve, reject) => {
    const worker = startThread("backup-worker", task);
    const timer =
      watch === undefined
        ? undefined
        : setInterval(() => {
            const st = statSync(watch.path, { throwIfNoEntry: false });
            if (st !== undefined) watch.onBytes(st.size);
          }, 100);
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearInterval(timer);
      fn();
    };
    worker.once("message", (reply: BackupTaskReply) => settle(() => resolve(reply)));
    worker.once("error", (error) => settle(() => reject(error)));
    worker.once("exit", (code) =>
      settle(() => reject(new Error(`The backup thread ended (exit code ${code}) without an answer`))),
    );
  });
}
