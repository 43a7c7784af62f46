// The cursor of change capture: what a consumer holds of a file, small enough to store beside
// the data (a few tens of bytes per session), and the file identity it is valid for.
import { hash } from "node:crypto";
import { InvalidArgumentError } from "@hermes/core";
import type { DatabaseConnection } from "../database-connection.js";
import { SessionMarks } from "./session-marks.js";

const CURSOR_VERSION = 1;

/**
 * What makes two reads "the same file, moved forward": a change in any of these means the
 * cursor cannot be followed (the file was replaced, or a table rebuilt or reshaped).
 */
export interface FileIdentity {
  /** `PRAGMA application_id` (newer agents stamp a generation into it). */
  app: number;
  /** `state_meta` `db_file_generation` and `store_instance_id`, where present. */
  generation: string | null;
  instance: string | null;
  /** `schema_version` of the file. */
  schema: number | null;
  /** Hash of the catalogue rows (name, root page, SQL) of `sessions`, `messages`, `system_prompts`. */
  tables: string;
}

/** The decoded cursor. */
export interface CursorState {
  identity: FileIdentity;
  /** `sqlite_sequence` of `messages` when read: it never goes down on a file moving forward. */
  seq: number;
  /** Every message id up to this one is accounted for in `sessions`. */
  hwm: number;
  /** Sessions still to read in the current pass, and the `hwm` the pass ends at; `null` between passes. */
  pending: string[] | null;
  pendingHwm: number;
  sessions: SessionMarks;
}

type Encoded = {
  v: number;
  id: FileIdentity;
  seq: number;
  hwm: number;
  p: string[] | null;
  ph: number;
  s: Record<string, [string, number, string]>;
};

/** A short hash (72 bits, base64url) of a text. */
export function shortHash(text: string): string {
  // One-shot `hash` is about twice as fast as createHash() for short texts (one per session a pass).
  return hash("sha1", text, "base64url").slice(0, 12);
}

/** The cursor as the opaque string consumers store (built as text: one entry a session). */
export function encodeCursor(c: CursorState): string {
  const head: Omit<Encoded, "s"> = {
    v: CURSOR_VERSION,
    id: c.identity,
    seq: c.seq,
    hwm: c.hwm,
    p: c.pending,
    ph: c.pendingHwm,
  };
  return `${JSON.stringify(head).slice(0, -1)},"s":{${c.sessions.encoded()}}}`;
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/** Reads a cursor back; anything that is not one of ours is an `InvalidArgumentError`. */
export function decodeCursor(text: unknown): CursorState {
  const bad = (why: string) =>
    new InvalidArgumentError("cursor", `cursor is not a change-capture cursor (${why})`);
  if (typeof text !== "string") throw bad("not a string");
  let e: Encoded;
  try {
    e = JSON.parse(text) as Encoded;
  } catch {
    throw bad("not JSON");
  }
  if (typeof e !== "object" || e === null || e.v !== CURSOR_VERSION) throw bad("unknown version");
  if (!isInt(e.seq) || !isInt(e.hwm) || !isInt(e.ph)) throw bad("bad counters");
  if (typeof e.id !== "object" || e.id === null || typeof e.id.tables !== "string") throw bad("bad identity");
  if (e.p !== null && !(Array.isArray(e.p) && e.p.every((x) => typeof x === "string"))) {
    throw bad("bad pending list");
  }
  if (typeof e.s !== "object" || e.s === null) throw bad("bad sessions");
  const sessions = new SessionMarks();
  for (const [id, m] of Object.entries(e.s)) {
    if (!Array.isArray(m) || typeof m[0] !== "string" || !isInt(m[1]) || typeof m[2] !== "string") {
      throw bad(`bad mark of session ${id}`);
    }
    sessions.set(id, { row: m[0], maxId: m[1], rows: m[2] });
  }
  return {
    identity: e.id,
    seq: e.seq,
    hwm: e.hwm,
    pending: e.p,
    pendingHwm: e.ph,
    sessions,
  };
}

/** A cursor holding nothing of the file (after a resync). */
export function emptyCursor(identity: FileIdentity, seq: number): CursorState {
  return { identity, seq, hwm: 0, pending: null, pendingHwm: 0, sessions: new SessionMarks() };
}

/** Why `was` cannot be followed on a file that now reads `now`; `null` when it can. */
export function identityChange(was: FileIdentity, now: FileIdentity): string | null {
  if (was.app !== now.app) return `the file's application_id changed (${was.app} → ${now.app})`;
  if (was.generation !== now.generation) return "the file's db_file_generation changed";
  if (was.instance !== now.instance) return "the file's store_instance_id changed";
  if (was.schema !== now.schema) return `the schema version changed (${was.schema} → ${now.schema})`;
  if (was.tables !== now.tables) return "the sessions or messages table was rebuilt or reshaped";
  return null;
}

/** Reads the identity of the file behind `conn` and the message sequence (a few catalogue reads). */
export function readIdentity(
  conn: DatabaseConnection,
  tables: ReadonlySet<string>,
): { identity: FileIdentity; seq: number } {
  const app = Number(conn.db.pragma("application_id", { simple: true }));
  let generation: string | null = null;
  let instance: string | null = null;
  if (tables.has("state_meta")) {
    const rows = conn.all<{ key: string; value: string | null }>(
      "SELECT key, value FROM main.state_meta WHERE key IN ('db_file_generation', 'store_instance_id')",
    );
    for (const r of rows) {
      if (r.key === "db_file_generation") generation = r.value;
      else instance = r.value;
    }
  }
  const schema = tables.has("schema_version")
    ? (conn.get<{ v: number | null }>("SELECT MAX(version) AS v FROM main.schema_version")?.v ?? null)
    : null;
  const catalogue = conn.all<{ name: string; rootpage: number; sql: string | null }>(
    "SELECT name, rootpage, sql FROM main.sqlite_master WHERE type = 'table' AND name IN ('sessions', 'messages', 'system_prompts') ORDER BY name",
  );
  const seq = tables.has("sqlite_sequence")
    ? (conn.get<{ seq: number | null }>("SELECT seq FROM main.sqlite_sequence WHERE name = 'messages'")
        ?.seq ?? 0)
    : 0;
  return {
    identity: { app, generation, instance, schema, tables: shortHash(JSON.stringify(catalogue)) },
    seq: Number(seq),
  };
}
