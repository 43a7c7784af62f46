import type { ConnectionPragmas, DatabaseConnection } from "../database-connection.js";
import { walSize } from "../store-runtime.js";
import { HandoffQueue } from "./handoff-queue.js";
import { referenceSearchIndexRepair } from "./search-index-repair.js";
import { referenceSearchMergePacing } from "./search-merge-pacing.js";
import { SharedCommits } from "./shared-commits.js";
import { DEFAULT_WRITE_POLICY, type WritePolicy } from "./write-policy.js";
import { WriteQueue } from "./write-queue.js";

/** What the write path of a writable store is built from (plain data: it crosses to the writer thread). */
export interface WritePathSettings {
  readonly path: string;
  readonly pragmas: ConnectionPragmas;
  readonly policy: Pick<WritePolicy, "deadlineMs" | "checkpointEvery" | "maxGroupSize" | "walMaxBytes">;
  /** Take turns with other processes' writers (`fairWrites`). */
  readonly fairWrites: boolean;
  /** Commit other processes' posted appends, and post ours (`shareCommits`). */
  readonly shareCommits: boolean;
}

/** The write path of one writable connection: its queue, and the writers' queue and shared commits it takes part in. */
export interface WritePath {
  readonly writes: WriteQueue;
  readonly turns: HandoffQueue | undefined;
  readonly shared: SharedCommits | undefined;
}

/**
 * The write path of `conn`: a {@link WriteQueue} with the reference's search-index repair and
 * merge pacing, its WAL checkpoints (on this connection, after the lock was handed to the next
 * writer), and, unless turned off, a place in the file's writers' queue and shared commits.
 * Built once per process for a file: on the caller's thread (`writer: "inline"`) or in the
 * writer thread.
 */
export function openWritePath(conn: DatabaseConnection, s: WritePathSettings): WritePath {
  const turns = s.fairWrites ? HandoffQueue.open(s.path) : undefined;
  const shared = turns === undefined || !s.shareCommits ? undefined : new SharedCommits(turns, conn);
  const writes = new WriteQueue(
    conn,
    { ...DEFAULT_WRITE_POLICY, ...s.policy },
    () => walSize(s.path),
    referenceSearchIndexRepair(conn),
    turns,
    shared,
    referenceSearchMergePacing(conn),
  );
  return { writes, turns, shared };
}

/**
 * Ends a write path once its queued writes have settled: a best-effort TRUNCATE checkpoint (it
 * waits only the short busy timeout for readers, then copies what it can, like PASSIVE: as the
 * reference's close, never an error; skipped once the file was found damaged), and its place in
 * the writers' queue.
 */
export async function closeWritePath(p: WritePath): Promise<void> {
  await p.writes.whenIdle();
  p.writes.checkpoint("TRUNCATE");
  p.turns?.close();
}

/**
 * Hands a write path over to a writer thread once its queued writes have settled: it leaves the
 * writers' queue (the writer has its own place). No checkpoint here: the writer's checkpoints
 * copy the WAL back from now on.
 */
export async function handOverWritePath(p: WritePath): Promise<void> {
  await p.writes.whenIdle();
  p.turns?.close();
}
