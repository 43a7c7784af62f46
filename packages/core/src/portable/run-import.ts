import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import { ImportInvalidError, type InvalidImportLine } from "../errors/import-invalid-error.js";
import { optionalBoolean, optionsObject } from "../validation/arguments.js";
import { fitToCapacity, skipReason } from "./fit-to-capacity.js";
import {
  type PortableSession,
  PortableValidationError,
  parseJsonlHeader,
  parsePortableSession,
} from "./jsonl-format.js";

/** Options of `importSessions`. */
export interface ImportSessionsOptions {
  /**
   * A session id that already exists with different content (other columns or messages):
   * `skip` (default) keeps the stored session untouched and lists it in `conflicts`;
   * `replace` overwrites its row and messages with the imported ones (its children keep their link).
   * A session that exists with the same content is always left as it is (idempotent import).
   */
  onConflict?: "skip" | "replace";
  /**
   * A line that cannot be imported: `abort` (default) rejects the import with `IMPORT_INVALID`
   * listing every bad line (for a file, before anything is written); `skip` imports the other
   * lines and lists the bad ones in the report.
   */
  onInvalid?: "abort" | "skip";
  /**
   * A session whose parent is neither in the source nor in the database: `reject` (default)
   * treats its line as invalid; `detach` imports it with `parent_session_id` = null.
   */
  missingParent?: "reject" | "detach";
  /**
   * Also import sessions the source flags archived (`archived` or `auto_archived`). By default
   * they are skipped (listed in `skipped`) by a store without the flag, which would list them;
   * a store that holds the flag (PostgreSQL) imports them and keeps them out of its listings.
   */
  includeArchived?: boolean;
  /** Also import sessions the source flags hidden (skipped by default, as archived ones). */
  includeHidden?: boolean;
}

/** Why a session was not imported: the source flags it archived or hidden. */
export type ImportSkipReason = "archived" | "hidden";

/** What an import did. */
export interface ImportReport {
  /** New sessions written, with their messages. */
  sessionsImported: number;
  messagesImported: number;
  /** Sessions already present with identical content (nothing written). */
  sessionsUnchanged: number;
  /** Sessions overwritten (`onConflict: "replace"`). */
  sessionsReplaced: number;
  /** Sessions present with different content and kept as stored (`onConflict: "skip"`). */
  conflicts: Array<{ id: string; line: number }>;
  /** Sessions imported without their missing parent (`missingParent: "detach"`). */
  detached: Array<{ id: string; line: number }>;
  /** Rejected lines (`onInvalid: "skip"`); with `abort` the import throws instead. */
  invalid: InvalidImportLine[];
  /**
   * Sessions not imported because the source flags them archived or hidden (see
   * `includeArchived`/`includeHidden`), and children of such sessions (with their parent's reason).
   */
  skipped: Array<{ id: string; line: number; reason: ImportSkipReason }>;
  /**
   * What the store cannot hold and left out, with counts, by field: `messages.superseded`
   * (rewound or superseded rows, which a store without view state would show), and
   * `sessions.<field>` / `messages.<field>` for each read-model field that held a value
   * (flags set, uids, compaction state). Empty when the store holds everything.
   */
  leftOut: Record<string, number>;
}

/**
 * The read-model fields a backend stores (`SESSION_VIEW_COLUMNS`/`MESSAGE_VIEW_COLUMNS`
 * names). A backend without `view_state` cannot keep superseded rows apart: they are left out.
 */
export interface ImportCapacity {
  readonly sessionFields: ReadonlySet<string>;
  readonly messageFields: ReadonlySet<string>;
}

/** What can be imported: a JSONL file path, or sessions as `exportStream` yields them. */
export type ImportSource = string | AsyncIterable<unknown> | Iterable<unknown>;

/** A transaction holds about this many rows at most; more sessions wait for the next one. */
const BATCH_MESSAGES = 5000;
const BATCH_SESSIONS = 200;
/** Rejected lines kept in an error or a report. */
const MAX_REPORTED = 100;

/** What became of one session of an import. */
export type ImportOutcome = "imported" | "unchanged" | "replaced" | "conflict";

/** A session ready to be written, with its line (or item number) in the source. */
export interface PendingImport {
  readonly session: PortableSession;
  readonly line: number;
  /** Written with `parent_session_id` = null (`missingParent: "detach"`). */
  readonly detach: boolean;
}

/**
 * What a backend gives {@link runImport}: the rest (validation, parents-first order, batching,
 * the report) is the same on every backend.
 */
export interface ImportBackend {
  /** The read-model fields it stores; none when absent (a v11 file). */
  readonly capacity?: ImportCapacity;
  /** Whether a session with this id is stored. */
  exists(id: string): boolean | Promise<boolean>;
  /**
   * Called before a file's sessions are written with the `schema_version` its header names, for
   * a backend that records the newest version of the data it holds (its exports name it).
   */
  noteSourceSchema?(version: number): Promise<void>;
  /**
   * Writes one unit of sessions in one transaction and returns each one's outcome, in order.
   * A session stored with the same content is `unchanged`; with other content, `conflict`
   * (`skip`) or overwritten, `replaced`. Message ids are kept unless taken; renumbered ids go
   * above `idFloor` (the source's largest id, 0 when unknown).
   */
  writeBatch(
    batch: readonly PendingImport[],
    o: { onConflict: "skip" | "replace"; idFloor: number },
  ): Promise<ImportOutcome[]>;
}

/** Collects sessions into write units of bounded size and records their outcomes. */
class BatchWriter {
  readonly report: ImportReport = {
    sessionsImported: 0,
    messagesImported: 0,
    sessionsUnchanged: 0,
    sessionsReplaced: 0,
    conflicts: [],
    detached: [],
    invalid: [],
    skipped: [],
    leftOut: {},
  };
  /** Ids written or queued in this import: their children may follow in the same unit. */
  readonly available = new Set<string>();
  #batch: PendingImport[] = [];
  #rows = 0;

  constructor(
    private readonly backend: ImportBackend,
    private readonly onConflict: "skip" | "replace",
    /** The largest message id of the source (0 when unknown): renumbered ids go above it. */
    private readonly idFloor = 0,
  ) {}

  async add(pending: PendingImport): Promise<void> {
    const session = fitToCapacity(pending.session, this.backend.capacity, this.report.leftOut);
    const p = session === pending.session ? pending : { ...pending, session };
    this.#batch.push(p);
    this.#rows += 1 + p.session.messages.length;
    this.available.add(p.session.id);
    if (this.#rows >= BATCH_MESSAGES || this.#batch.length >= BATCH_SESSIONS) await this.flush();
  }

  async flush(): Promise<void> {
    const batch = this.#batch;
    if (batch.length === 0) return;
    this.#batch = [];
    this.#rows = 0;
    // Outcomes are collected inside the unit and applied after COMMIT: a unit retried after a
    // busy error runs again from the start and must not count twice.
    const outcomes = await this.backend.writeBatch(batch, {
      onConflict: this.onConflict,
      idFloor: this.idFloor,
    });
    const r = this.report;
    outcomes.forEach((outcome, i) => {
      const p = batch[i]!;
      if (p.detach) r.detached.push({ id: p.session.id, line: p.line });
      if (outcome === "imported" || outcome === "replaced") {
        if (outcome === "imported") r.sessionsImported++;
        else r.sessionsReplaced++;
        r.messagesImported += p.session.messages.length;
      } else if (outcome === "unchanged") r.sessionsUnchanged++;
      else r.conflicts.push({ id: p.session.id, line: p.line });
    });
  }
}

/** Import options with their defaults, or `INVALID_ARGUMENT`. */
export function importSessionsArguments(
  o: ImportSessionsOptions | undefined,
): Required<ImportSessionsOptions> {
  const opts = optionsObject("options", o);
  const pick = <T extends string>(
    name: keyof ImportSessionsOptions,
    allowed: readonly T[],
    fallback: T,
  ): T => {
    const value = opts[name];
    if (value === undefined) return fallback;
    if (!allowed.includes(value as T)) {
      throw new InvalidArgumentError(name, `${name} must be one of ${allowed.join(", ")}`);
    }
    return value as T;
  };
  return {
    onConflict: pick("onConflict", ["skip", "replace"], "skip"),
    onInvalid: pick("onInvalid", ["abort", "skip"], "abort"),
    missingParent: pick("missingParent", ["reject", "detach"], "reject"),
    includeArchived: optionalBoolean("includeArchived", opts.includeArchived, false),
    includeHidden: optionalBoolean("includeHidden", opts.includeHidden, false),
  };
}

/**
 * Imports sessions with their messages into `backend`, keeping their ids (message ids too,
 * unless taken). Each session is written whole or not at all; parents are written before their
 * children whatever the order of the source; importing the same data twice adds nothing.
 *
 * A file is read twice, never whole: the first pass validates every line (a bad line is
 * reported with its number and, by default, nothing at all is written) and plans the order,
 * the second writes. An iterable is validated item by item as it is consumed.
 */
export async function runImport(
  backend: ImportBackend,
  source: ImportSource,
  o?: ImportSessionsOptions,
): Promise<ImportReport> {
  const opts = importSessionsArguments(o);
  if (typeof source === "string") {
    if (source.length === 0 || source.includes("\0")) {
      throw new InvalidArgumentError("source", "source must be a JSONL file path or an iterable of sessions");
    }
    return importFile(backend, source, opts);
  }
  if (
    typeof source !== "object" ||
    source === null ||
    (typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function" &&
      typeof (source as Iterable<unknown>)[Symbol.iterator] !== "function")
  ) {
    throw new InvalidArgumentError("source", "source must be a JSONL file path or an iterable of sessions");
  }
  return importIterable(backend, source, opts);
}

// ---------------------------------------------------------------------------------------------
// Files

/** One line of the file: where it is, and its session's id and parent. */
interface LineEntry {
  readonly line: number;
  readonly offset: number;
  readonly length: number;
  readonly id: string;
  readonly parent: string | null;
  detach: boolean;
}

/** Every line of a file with its byte offset and length, without holding the file. */
export async function* readLines(
  path: string,
): AsyncGenerator<{ line: number; offset: number; bytes: Buffer }> {
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let offset = 0;
  let line = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      const bytes = pendingLength === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      pendingLength = 0;
      yield { line: ++line, offset, bytes };
      offset += bytes.length + 1;
      start = nl + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingLength += chunk.length - start;
    }
  }
  if (pendingLength > 0) yield { line: ++line, offset, bytes: Buffer.concat(pending) };
}

/** One JSONL line (a trailing CR dropped) parsed as JSON, or a `PortableValidationError`. */
export function decodeLine(bytes: Buffer): unknown {
  // A CRLF file is fine too.
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
  const text = bytes.toString("utf8", 0, end);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PortableValidationError(`not valid JSON (${(error as Error).message})`);
  }
}

/** The `id` of a rejected line when it has one, to explain why its children are rejected. */
export function rejectedLineId(bytes: Buffer): string | null {
  try {
    const value: unknown = decodeLine(bytes);
    const id = typeof value === "object" && value !== null ? (value as { id?: unknown }).id : undefined;
    return typeof id === "string" && id !== "" ? id : null;
  } catch {
    return null;
  }
}

const isBlank = (bytes: Buffer) => bytes.every((b) => b === 32 || b === 9 || b === 13);

async function importFile(
  backend: ImportBackend,
  path: string,
  opts: Required<ImportSessionsOptions>,
): Promise<ImportReport> {
  const invalid: InvalidImportLine[] = [];
  const reject = (line: number, message: string) => invalid.push({ line, message });
  const entries: LineEntry[] = [];
  const byId = new Map<string, LineEntry>();
  /** Ids of rejected lines: their children are rejected too, naming the line. */
  const badIds = new Map<string, number>();
  /** Sessions skipped for their flags (and their descendants), with the reason. */
  const skipped = new Map<string, ImportSkipReason>();
  const skippedList: ImportReport["skipped"] = [];
  let maxMessageId = 0;
  let sawHeader = false;
  let sourceSchema: number | null = null;

  // Pass 1: validate every line and note where each session is.
  try {
    for await (const { line, offset, bytes } of readLines(path)) {
      if (isBlank(bytes)) continue;
      try {
        const value = decodeLine(bytes);
        if (!sawHeader) {
          if (line !== 1) throw new PortableValidationError("the first line must be the header");
          parseJsonlHeader(value);
          const named = (value as { schema_version?: unknown }).schema_version;
          if (typeof named === "number" && Number.isSafeInteger(named) && named > 0) sourceSchema = named;
          sawHeader = true;
          continue;
        }
        const s = parsePortableSession(value);
        const other = byId.get(s.id);
        if (other !== undefined)
          throw new PortableValidationError(`session ${s.id} already appears on line ${other.line}`);
        for (const m of s.messages) if (m.id !== null && m.id > maxMessageId) maxMessageId = m.id;
        const reason = skipReason(s, opts, backend.capacity);
        if (reason !== null) {
          skipped.set(s.id, reason);
          skippedList.push({ id: s.id, line, reason });
          continue;
        }
        const entry: LineEntry = {
          line,
          offset,
          length: bytes.length,
          id: s.id,
          parent: s.parent_session_id,
          detach: false,
        };
        entries.push(entry);
        byId.set(s.id, entry);
      } catch (error) {
        if (!(error instanceof PortableValidationError)) throw error;
        reject(line, error.message);
        if (!sawHeader) break; // not a sessions file at all: stop at line 1
        const id = rejectedLineId(bytes);
        if (id !== null && !badIds.has(id)) badIds.set(id, line);
      }
      if (entries.length % 10_000 === 0) await new Promise((r) => setImmediate(r));
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR" || code === "EACCES") {
      throw new InvalidArgumentError("source", `cannot read ${path} (${code})`);
    }
    throw error;
  }
  if (!sawHeader && invalid.length === 0) reject(1, "the file is empty: the first line must be the header");

  // Plan: parents before children (depth-first, iterative: lineage chains can be long).
  const order: LineEntry[] = [];
  const state = new Map<LineEntry, "visiting" | "done" | "bad">();
  const exists = (id: string) => backend.exists(id);
  for (const start of entries) {
    if (state.has(start)) continue;
    const stack: LineEntry[] = [start];
    while (stack.length > 0) {
      const e = stack[stack.length - 1]!;
      const s = state.get(e);
      if (s === "done" || s === "bad") {
        stack.pop();
        continue;
      }
      const parent = e.parent === null ? undefined : byId.get(e.parent);
      if (s === undefined) {
        state.set(e, "visiting");
        if (parent !== undefined && !state.has(parent)) {
          stack.push(parent);
          continue;
        }
      }
      stack.pop();
      let problem: string | null = null;
      const parentSkipped = e.parent === null ? undefined : skipped.get(e.parent);
      if (parentSkipped !== undefined) {
        // A child of a skipped session goes with it (the agent flags whole lineages).
        state.set(e, "bad");
        skipped.set(e.id, parentSkipped);
        skippedList.push({ id: e.id, line: e.line, reason: parentSkipped });
        continue;
      }
      if (e.parent !== null) {
        const ps = parent === undefined ? undefined : state.get(parent);
        if (parent === undefined && badIds.has(e.parent)) {
          problem = `parent session ${e.parent} (line ${badIds.get(e.parent)}) cannot be imported`;
        } else if (parent === undefined) {
          if (!(await exists(e.parent))) {
            if (opts.missingParent === "detach") e.detach = true;
            else problem = `parent session ${e.parent} is neither in the file nor in the database`;
          }
        } else if (ps === "visiting")
          problem = `parent session ${e.parent} (line ${parent.line}) is its own descendant`;
        else if (ps === "bad")
          problem = `parent session ${e.parent} (line ${parent.line}) cannot be imported`;
      }
      if (problem === null) {
        state.set(e, "done");
        order.push(e);
      } else {
        state.set(e, "bad");
        reject(e.line, problem);
      }
    }
  }
  invalid.sort((a, b) => a.line - b.line);
  if (invalid.length > 0 && opts.onInvalid === "abort") {
    throw new ImportInvalidError(invalid.slice(0, MAX_REPORTED), invalid.length);
  }

  if (sourceSchema !== null && order.length > 0) await backend.noteSourceSchema?.(sourceSchema);
  // Pass 2: write in the planned order, reading each line again at its offset.
  const writer = new BatchWriter(backend, opts.onConflict, maxMessageId);
  writer.report.invalid = invalid.slice(0, MAX_REPORTED);
  writer.report.skipped = skippedList.sort((a, b) => a.line - b.line);
  const handle = await open(path, "r");
  try {
    for (const e of order) {
      const buffer = Buffer.allocUnsafe(e.length);
      const { bytesRead } = await handle.read(buffer, 0, e.length, e.offset);
      let session: PortableSession;
      try {
        session = parsePortableSession(decodeLine(buffer.subarray(0, bytesRead)));
        if (session.id !== e.id) throw new PortableValidationError("the line changed during the import");
      } catch (error) {
        if (!(error instanceof PortableValidationError)) throw error;
        throw new ImportInvalidError([
          { line: e.line, message: `${error.message} (the file changed while importing)` },
        ]);
      }
      await writer.add({ session, line: e.line, detach: e.detach });
    }
    await writer.flush();
  } finally {
    await handle.close();
  }
  return writer.report;
}

// ---------------------------------------------------------------------------------------------
// Iterables

async function importIterable(
  backend: ImportBackend,
  source: AsyncIterable<unknown> | Iterable<unknown>,
  opts: Required<ImportSessionsOptions>,
): Promise<ImportReport> {
  const writer = new BatchWriter(backend, opts.onConflict);
  const invalid: InvalidImportLine[] = [];
  /** Items waiting for a parent that has not come yet, by parent id. */
  const waiting = new Map<string, PendingImport[]>();
  const seen = new Set<string>();
  const skipped = new Map<string, ImportSkipReason>();
  const exists = async (id: string) => writer.available.has(id) || (await backend.exists(id));

  const fail = async (line: number, message: string) => {
    if (opts.onInvalid === "abort") {
      // Whatever came before the bad item is written, so the outcome does not depend on batching.
      await writer.flush();
      throw new ImportInvalidError([{ line, message }], 1, "item");
    }
    invalid.push({ line, message });
  };
  const release = async (p: PendingImport) => {
    const ready: PendingImport[] = [p];
    while (ready.length > 0) {
      const next = ready.shift()!;
      await writer.add(next);
      const children = waiting.get(next.session.id);
      if (children !== undefined) {
        waiting.delete(next.session.id);
        ready.push(...children);
      }
    }
  };

  let line = 0;
  for await (const item of source as AsyncIterable<unknown>) {
    line++;
    let session: PortableSession;
    try {
      session = parsePortableSession(item);
    } catch (error) {
      if (!(error instanceof PortableValidationError)) throw error;
      await fail(line, error.message);
      continue;
    }
    if (seen.has(session.id)) {
      await fail(line, `session ${session.id} appears twice`);
      continue;
    }
    seen.add(session.id);
    const parent = session.parent_session_id;
    const reason =
      skipReason(session, opts, backend.capacity) ?? (parent === null ? null : (skipped.get(parent) ?? null));
    if (reason !== null) {
      skipped.set(session.id, reason);
      writer.report.skipped.push({ id: session.id, line, reason });
      continue;
    }
    const p: PendingImport = { session, line, detach: false };
    if (parent !== null && !(await exists(parent))) {
      const list = waiting.get(parent);
      if (list === undefined) waiting.set(parent, [p]);
      else list.push(p);
      continue;
    }
    await release(p);
  }
  // Whatever still waits has a parent that never came (or that was itself rejected).
  if (opts.missingParent === "detach") {
    for (const parent of [...waiting.keys()].filter((id) => !seen.has(id))) {
      const list = waiting.get(parent) ?? [];
      waiting.delete(parent);
      for (const p of list) await release({ ...p, detach: true });
    }
  }
  const left = [...waiting.entries()].flatMap(([parent, list]) => list.map((p) => ({ p, parent })));
  left.sort((a, b) => a.p.line - b.p.line);
  for (const { p, parent } of left) {
    const reason = skipped.get(parent);
    if (reason !== undefined) {
      // Came before its skipped parent: skipped with it (descendants of it too).
      skipped.set(p.session.id, reason);
      writer.report.skipped.push({ id: p.session.id, line: p.line, reason });
      continue;
    }
    await fail(
      p.line,
      seen.has(parent)
        ? `parent session ${parent} cannot be imported`
        : `parent session ${parent} is neither in the source nor in the database`,
    );
  }
  await writer.flush();
  writer.report.invalid = invalid.slice(0, MAX_REPORTED);
  return writer.report;
}
