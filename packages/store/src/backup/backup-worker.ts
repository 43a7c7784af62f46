// The backup thread (run-backup-task.ts): one task per thread, so that a snapshot of a large
// file, and its integrity and FTS checks, never block the caller's event loop.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { lowerBackgroundThreadPriority } from "../background-thread-priority.js";
import { sqliteCode } from "../sqlite-errors.js";
import { checkSnapshot } from "./check-snapshot.js";
import type { BackupTask, BackupTaskReply } from "./run-backup-task.js";

const port = parentPort;
if (port === null) throw new Error("backup-worker runs in a worker thread");
const task = workerData as BackupTask;

/**
 * The online backup in one step of every page: the copy is made inside one read transaction
 * of the source, so a writer in another process cannot make it restart (a stepped backup
 * restarts after every foreign commit), and in WAL mode writers go on meanwhile.
 */
async function snapshot(source: string, dest: string, busyTimeoutMs: number): Promise<void> {
  const db = new Database(source, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  try {
    // Full priority for the copy: in rollback-journal mode the agent's commits wait for its read
    // lock, and in WAL mode the WAL cannot be checkpointed past it. The checks come after, lowered.
    await db.backup(dest, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
}

async function run(): Promise<BackupTaskReply> {
  try {
    const t0 = performance.now();
    if (task.kind === "snapshot") await snapshot(task.source, task.dest, task.busyTimeoutMs);
    const snapshotMs = performance.now() - t0;
    // The checks read our own copy only: nothing waits for them but the caller.
    lowerBackgroundThreadPriority();
    const check = checkSnapshot(task.kind === "snapshot" ? task.dest : task.path);
    return { ok: true, check, snapshotMs, checkMs: performance.now() - t0 - snapshotMs };
  } catch (error) {
    return { ok: false, code: sqliteCode(error), message: (error as Error).message };
  }
}

port.postMessage(await run());
