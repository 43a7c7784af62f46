import {
  type CapturedMessage,
  type ChangeBatch,
  type ChangeCursor,
  changesSince,
  openReadOnlyDatabase,
  openSessionStore,
  type SessionRow,
} from "@hermes/store";
import { expect } from "vitest";
import { type FileState, fileState } from "./file-state.js";

/**
 * An in-memory copy of an agent's file built only from change-capture batches, as a mirror
 * would hold it: sessions, and every message row with its state.
 */
export class ChangeMirror {
  readonly sessions = new Map<string, SessionRow>();
  readonly messages = new Map<number, CapturedMessage>();
  cursor: ChangeCursor | null = null;
  readonly kinds: Array<ChangeBatch["kind"]> = [];
  readonly reasons: string[] = [];

  apply(b: ChangeBatch): void {
    this.kinds.push(b.kind);
    if (b.kind === "resync") {
      this.reasons.push(b.reason ?? "");
      this.sessions.clear();
      this.messages.clear();
    }
    for (const id of b.deletedSessionIds) {
      this.sessions.delete(id);
      for (const [mid, m] of this.messages) if (m.session_id === id) this.messages.delete(mid);
    }
    for (const s of b.sessions) this.sessions.set(s.id, s);
    const added = new Set(b.messages.map((m) => m.id));
    for (const { session_id, rows } of b.messageStates) {
      const keep = new Map(rows.map((r) => [r.id, r]));
      for (const [mid, m] of this.messages) {
        if (m.session_id !== session_id || added.has(mid)) continue;
        const state = keep.get(mid);
        if (state === undefined) this.messages.delete(mid);
        else Object.assign(m, state);
      }
    }
    for (const m of b.messages) this.messages.set(m.id, { ...m });
    this.cursor = b.cursor;
  }

  /** Polls the file once (until caught up) and applies what it reports; the batches, for checks. */
  async poll(path: string, o: { batchSize?: number } = {}): Promise<ChangeBatch[]> {
    const batches: ChangeBatch[] = [];
    for await (const b of changesSince(path, this.cursor, o)) {
      this.apply(b);
      batches.push(b);
    }
    return batches;
  }

  /**
   * Follows `path` from the mirror's cursor (polls every 20 ms; full passes at least
   * `sessionScanIntervalMs` apart), applying each batch and handing
   * it to `onBatch`, until `signal` aborts. Returns when the feed ends.
   */
  async follow(
    path: string,
    signal: AbortSignal,
    onBatch: (b: ChangeBatch) => void = () => {},
    sessionScanIntervalMs = 0,
  ): Promise<void> {
    for await (const b of changesSince(path, this.cursor, {
      follow: true,
      intervalMs: 20,
      signal,
      sessionScanIntervalMs,
    })) {
      this.apply(b);
      onBatch(b);
    }
  }

  sessionMessages(id: string): CapturedMessage[] {
    return [...this.messages.values()].filter((m) => m.session_id === id).sort((a, b) => a.id - b.id);
  }

  /** The agent's display view of a session, from the rows' states (as a mirror would compute it). */
  displayed(id: string, byDisplayOrder: boolean): CapturedMessage[] {
    const shown = this.sessionMessages(id).filter(
      (m) => (m.view_state === undefined || m.view_state !== "superseded") && m.model_only !== true,
    );
    if (!byDisplayOrder) return shown.sort((a, b) => a.timestamp - b.timestamp || a.id - b.id);
    const winners = shown.filter(
      (m) =>
        m.display_order === null ||
        m.display_order === undefined ||
        !shown.some(
          (p) =>
            p !== m &&
            p.display_order === m.display_order &&
            (rank(p) > rank(m) || (rank(p) === rank(m) && p.id > m.id)),
        ),
    );
    const key = (m: CapturedMessage) => m.display_order ?? m.id;
    return winners.sort((a, b) => key(a) - key(b) || a.id - b.id);
  }
}

const rank = (m: CapturedMessage) => (m.view_state === "active" ? 1 : 0);

/** A captured row as the store's reads return it (without the display-only keys). */
function asRead(m: CapturedMessage): Record<string, unknown> {
  const { display_order: _o, model_only: _m, ...rest } = m;
  return rest;
}

/**
 * Holds the mirror equal to a fresh full read of the file: the store's sessions (every field)
 * and display reads, and the raw rows' replay and audit views.
 */
export async function expectMirrorEqualsFile(mirror: ChangeMirror, path: string): Promise<void> {
  const raw = openReadOnlyDatabase(path);
  let ids: string[];
  let rows: Array<{ id: number; session_id: string; state: string }>;
  let byDisplayOrder: boolean;
  try {
    ids = (raw.db.prepare("SELECT id FROM sessions ORDER BY id").all() as Array<{ id: string }>).map(
      (r) => r.id,
    );
    const cols = raw.profile.messageColumns;
    byDisplayOrder = cols.has("display_order");
    const state = cols.has("active")
      ? "CASE WHEN active = 1 THEN 'active' WHEN compacted = 1 THEN 'compacted' ELSE 'superseded' END"
      : "'active'";
    rows = raw.db
      .prepare(`SELECT id, session_id, ${state} AS state FROM messages ORDER BY id`)
      .all() as typeof rows;
  } finally {
    raw.close();
  }
  expect([...mirror.sessions.keys()].sort()).toEqual(ids);
  // Audit view (every row, its state) and replay view (active rows, by id).
  const inSessions = rows.filter((r) => ids.includes(r.session_id));
  expect(
    [...mirror.messages.values()]
      .sort((a, b) => a.id - b.id)
      .map((m) => ({ id: m.id, session_id: m.session_id, state: m.view_state ?? "active" })),
  ).toEqual(inSessions);
  const store = await openSessionStore({ path, readOnly: true });
  try {
    for (const id of ids) {
      expect(mirror.sessions.get(id), `session ${id}`).toEqual(await store.getSession(id));
      expect(mirror.displayed(id, byDisplayOrder).map(asRead), `display of ${id}`).toEqual(
        await store.getMessages(id),
      );
    }
  } finally {
    await store.close();
  }
}

/** Polls `path` into `mirror`, checking the file's bytes, mode and folder are untouched by it. */
export async function pollUntouched(mirror: ChangeMirror, path: string): Promise<ChangeBatch[]> {
  const before: FileState = fileState(path);
  const batches = await mirror.poll(path, { batchSize: 40 });
  expect(fileState(path)).toEqual(before);
  return batches;
}
