// Change capture over an agent's file: what changed in sessions and messages since a cursor,
// read without writing anything (see the package README, "Change capture").
import { existsSync, statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type ChangeBatch,
  type ChangeCursor,
  type ChangesSinceOptions,
  HermesStoreError,
  InvalidArgumentError,
  nonNegativeInt,
  optionsObject,
  type SessionRow,
  toSessionViewFields,
} from "@hermes/core";
import { ReadOnlyFile } from "../read-only-file.js";
import { isBusyError, mapSqliteError } from "../sqlite-errors.js";
import { type CaptureReads, captureReads, lightHash, stateOf } from "./capture-reads.js";
import {
  type CursorState,
  decodeCursor,
  emptyCursor,
  encodeCursor,
  identityChange,
  readIdentity,
  shortHash,
} from "./change-cursor.js";

/** The inode of `path`, or `null` while it cannot be read (being replaced). */
function inodeOf(path: string): bigint | null {
  try {
    return statSync(path, { bigint: true }).ino;
  } catch {
    return null;
  }
}

function changesSinceArguments(cursor: unknown, o: ChangesSinceOptions | undefined) {
  const opts = optionsObject("options", o);
  const intervalMs = nonNegativeInt("intervalMs", opts.intervalMs, 1000, 3_600_000);
  if (intervalMs < 10) throw new InvalidArgumentError("intervalMs", "intervalMs must be at least 10");
  const batchSize = nonNegativeInt("batchSize", opts.batchSize, 5000, 1_000_000);
  if (batchSize === 0) throw new InvalidArgumentError("batchSize", "batchSize must be at least 1");
  const busyTimeoutMs = nonNegativeInt("busyTimeoutMs", opts.busyTimeoutMs, 1000, 60_000);
  const sessionScanIntervalMs = nonNegativeInt(
    "sessionScanIntervalMs",
    opts.sessionScanIntervalMs,
    0,
    86_400_000,
  );
  const signal = opts.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError("signal", "signal must be an AbortSignal");
  }
  return {
    state: cursor === null ? null : decodeCursor(cursor),
    follow: opts.follow === true,
    intervalMs,
    batchSize,
    busyTimeoutMs,
    sessionScanIntervalMs,
    signal,
  };
}

function emptyBatch(kind: ChangeBatch["kind"], reason: string | null): ChangeBatch {
  return {
    kind,
    reason,
    sessions: [],
    deletedSessionIds: [],
    messageStates: [],
    messages: [],
    cursor: "",
    caughtUp: false,
  };
}

const isEmpty = (b: ChangeBatch) =>
  b.kind === "changes" &&
  b.sessions.length === 0 &&
  b.deletedSessionIds.length === 0 &&
  b.messageStates.length === 0 &&
  b.messages.length === 0;

/**
 * Reads sessions of `state.pending` until about `budget` message rows were read, adding what
 * changed to `batch` and moving their marks forward.
 */
function readPending(reads: CaptureReads, state: CursorState, batch: ChangeBatch, budget: number): void {
  const pending = state.pending ?? [];
  let spent = 0;
  let done = 0;
  for (const id of pending) {
    if (spent >= budget) break;
    done++;
    const prev = state.sessions.get(id);
    const read = reads.session(id);
    if (read === undefined) {
      if (prev !== undefined) batch.deletedSessionIds.push(id);
      state.sessions.delete(id);
      continue;
    }
    const { row } = read;
    const rowHash = shortHash(read.sig);
    const light = reads.light(id);
    const after = prev?.maxId ?? 0;
    if (prev === undefined || prev.row !== rowHash) {
      batch.sessions.push(toSessionViewFields({ ...row }) as unknown as SessionRow);
    }
    if (prev !== undefined && lightHash(light, after) !== prev.rows) {
      batch.messageStates.push({ session_id: id, rows: light.filter((r) => r.id <= after).map(stateOf) });
    }
    const fresh = light.length > 0 && light[light.length - 1]!.id > after ? reads.newMessages(id, after) : [];
    for (const m of fresh) batch.messages.push(m);
    spent += light.length + fresh.length;
    state.sessions.set(id, {
      row: rowHash,
      maxId: light.length > 0 ? light[light.length - 1]!.id : 0,
      rows: lightHash(light),
    });
  }
  state.pending = pending.slice(done);
}

/**
 * Starts a pass: finds deleted sessions (reported at once) and the sessions to read (new, whose
 * row changed, or with messages above the cursor's high-water mark).
 */
function startPass(reads: CaptureReads, state: CursorState, batch: ChangeBatch) {
  const rows = reads.allSessionSigs();
  const withNew = reads.sessionsWithNewMessages(state.hwm);
  const pending: string[] = [];
  const present = new Set<string>();
  for (const row of rows) {
    present.add(row.id);
    const mark = state.sessions.get(row.id);
    const newest = withNew.get(row.id);
    if (
      mark === undefined ||
      (newest !== undefined && newest > mark.maxId) ||
      mark.row !== shortHash(row.sig)
    ) {
      pending.push(row.id);
    }
  }
  for (const id of [...state.sessions.keys()]) {
    if (present.has(id)) continue;
    batch.deletedSessionIds.push(id);
    state.sessions.delete(id);
  }
  state.pending = pending;
  state.pendingHwm = Math.max(state.hwm, reads.maxMessageId());
}

/**
 * Reads only the sessions with messages above the high-water mark (a rowid range): new rows,
 * and those sessions' rows and states, exactly. Sessions changed without a new message wait for
 * the next pass. Such a batch is never `caughtUp`.
 */
function readAppends(reads: CaptureReads, state: CursorState, batch: ChangeBatch): void {
  const top = reads.maxMessageId();
  const touched: string[] = [];
  for (const [id, newest] of reads.sessionsWithNewMessages(state.hwm)) {
    if (newest > (state.sessions.get(id)?.maxId ?? 0)) touched.push(id);
  }
  state.pending = touched;
  readPending(reads, state, batch, Number.POSITIVE_INFINITY);
  state.pending = null;
  state.hwm = Math.max(state.hwm, top);
}

/** One batch: a read transaction over the file (`appendsOnly`: see {@link readAppends}). */
function step(
  file: ReadOnlyFile,
  prior: CursorState | null,
  budget: number,
  appendsOnly = false,
): [ChangeBatch, CursorState] {
  const conn = file.conn;
  conn.exec("BEGIN");
  try {
    const { identity, seq } = readIdentity(conn, file.profile.tables);
    const reads = captureReads(conn, file.profile);
    let why: string | null =
      prior === null ? "no cursor: a full copy follows" : identityChange(prior.identity, identity);
    if (why === null && prior !== null) {
      if (seq < prior.seq)
        why = `message ids went backwards (sequence ${prior.seq} → ${seq}): a restored or older file`;
      else if (seq === 0 && reads.maxMessageId() < prior.hwm) why = "message ids went backwards";
    }
    if (why !== null) {
      const fresh = emptyCursor(identity, seq);
      const batch = emptyBatch("resync", why);
      batch.cursor = encodeCursor(fresh);
      return [batch, fresh];
    }
    const state = prior as CursorState;
    state.seq = seq;
    const batch = emptyBatch("changes", null);
    if (appendsOnly && state.pending === null) {
      readAppends(reads, state, batch);
      batch.messages.sort((a, b) => a.id - b.id);
      batch.cursor = encodeCursor(state);
      return [batch, state];
    }
    const started = state.pending === null;
    if (started) startPass(reads, state, batch);
    readPending(reads, state, batch, budget);
    if (state.pending !== null && state.pending.length === 0) {
      state.hwm = state.pendingHwm;
      state.pending = null;
      // A pass spread over several transactions may have missed what was written meanwhile to
      // sessions it had already read: only a pass done in one transaction catches up.
      batch.caughtUp = started;
    }
    batch.messages.sort((a, b) => a.id - b.id);
    batch.cursor = encodeCursor(state);
    return [batch, state];
  } finally {
    if (conn.db.inTransaction) conn.exec("COMMIT");
  }
}

/**
 * What changed in the sessions and messages of the agent's file at `path` since `cursor`, in
 * the agent's view, as batches to apply in order (see `ChangeBatch`): new and updated sessions
 * (whole rows: titles, counters, end, flags), new messages, the rows whose visibility or display
 * order changed (rewind, compaction), deleted sessions and messages. A `null` cursor, or one the
 * file cannot follow any more (replaced or restored, generation or table layout changed, ids
 * going backwards), starts with a `resync` batch: drop what you hold; everything follows.
 *
 * It only reads: the file is opened read-only (no trigger, table, sidecar or journal-mode change;
 * WAL or rollback journal; a read-only folder works). Each batch is one short read transaction.
 * While following, an idle poll costs one `PRAGMA data_version`.
 *
 * @example
 * let cursor = loadCursor() // null the first time
 * for await (const batch of changesSince("/home/ada/.hermes/state.db", cursor, { follow: true, signal })) {
 *   applyInOneTransaction(batch) // stores batch.cursor with the data
 * }
 */
export function changesSince(
  path: string,
  cursor: ChangeCursor | null,
  o?: ChangesSinceOptions,
): AsyncIterable<ChangeBatch> {
  const a = changesSinceArguments(cursor, o);
  if (typeof path !== "string" || path === "")
    throw new InvalidArgumentError("path", "path must be a file path");
  return (async function* () {
    if (!existsSync(path)) {
      throw new HermesStoreError(
        "STORE_READ_ONLY",
        `There is no database at ${path}; change capture creates nothing.`,
      );
    }
    const open = () => ({
      file: ReadOnlyFile.open(path, {
        busyTimeoutMs: a.busyTimeoutMs,
        snapshotMaxBytes: 256 * 1024 * 1024,
        views: true,
      }),
      ino: inodeOf(path),
    });
    let { file, ino } = open();
    let reopened = 0;
    const aborted = () => a.signal?.aborted === true;
    const version = () => {
      // Another file renamed over the path (a restore): the open connection still reads the
      // old one, so open the new one; the identity checks then decide between diff and resync.
      const now = inodeOf(path);
      if (now !== null && now !== ino) {
        file.close();
        ({ file, ino } = open());
        reopened++;
      }
      file.refresh();
      return `${reopened}:${file.generation}:${file.db.pragma("data_version", { simple: true })}`;
    };
    let state = a.state;
    // While following with sessionScanIntervalMs: when the last full pass began, and whether
    // commits were read since by appends-only batches (so a full pass is owed).
    let lastScan = Number.NEGATIVE_INFINITY;
    let owed = false;
    const scanDue = () => performance.now() - lastScan >= a.sessionScanIntervalMs;
    try {
      while (!aborted()) {
        const seen = version();
        const appendsOnly = a.follow && state !== null && state.pending === null && !scanDue();
        const began = performance.now();
        let batch: ChangeBatch;
        try {
          [batch, state] = step(file, state, a.batchSize, appendsOnly);
        } catch (error) {
          // A rollback-journal writer holding its lock past the busy timeout: try again later.
          if (!(a.follow && isBusyError(error))) throw mapSqliteError(error, path);
          await sleep(a.intervalMs, undefined, { signal: a.signal }).catch(() => undefined);
          continue;
        }
        if (batch.kind === "resync") lastScan = Number.NEGATIVE_INFINITY;
        else if (batch.caughtUp) [lastScan, owed] = [began, false];
        else if (appendsOnly) owed = true;
        if (!(a.follow && isEmpty(batch))) yield batch;
        if (batch.kind === "resync" || (!batch.caughtUp && !appendsOnly)) continue;
        if (!a.follow) return;
        while (!aborted() && version() === seen && !(owed && scanDue())) {
          await sleep(a.intervalMs, undefined, { signal: a.signal }).catch(() => undefined);
        }
      }
    } finally {
      file.close();
    }
  })();
}
