import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CORE_INDEXES, CORE_TABLES, TITLE_INDEX_SQL } from "@hermes/schema";
import { openSessionStore } from "@hermes/store";
import Database from "better-sqlite3";
import { ConversationGenerator, type GeneratedMessage } from "./conversation-generator.js";
import { LongStepProgress } from "./long-step-progress.js";
import { SeededRandom, ZipfPicker } from "./seeded-random.js";
import { ENGLISH_WORDS, MODELS, SOURCES } from "./vocabulary.js";

/** Bump when the generator's output changes, so stale cached files are not reused. */
export const GENERATOR_VERSION = 1;

/** The id of the one large session of a data set that has one. */
export const BIG_SESSION_ID = "20260530_000000_b16b16";

/** Start of generated time: 2026-06-01T00:00:00Z, fixed so data sets do not depend on the clock. */
const EPOCH = 1_780_272_000;
const SPAN_SECONDS = 180 * 86_400;

/** Parameters of a generated data set; the cache key is derived from all of them. */
export interface DatasetSpec {
  /** Label used in the file name and progress bar. */
  readonly name: string;
  /** Ordinary sessions. */
  readonly sessions: number;
  /** Messages spread over the ordinary sessions (each has at least one). */
  readonly messages: number;
  /** Messages of one extra session, `BIG_SESSION_ID` (0: none). */
  readonly bigSessionMessages: number;
  readonly seed: number;
  /** `v11`: a file created by `openSessionStore`; `v10`: the reference's v10 schema (old FTS tables). */
  readonly schema: "v11" | "v10";
}

/** What the generator wrote, stored next to the cached file. */
export interface DatasetInfo {
  readonly spec: DatasetSpec;
  readonly path: string;
  readonly sessions: number;
  readonly messages: number;
  readonly cjkMessages: number;
  readonly fileBytes: number;
  readonly generatedInMs: number;
  readonly generatorVersion: number;
}

function cacheKey(spec: DatasetSpec): string {
  return createHash("sha256")
    .update(JSON.stringify({ ...spec, v: GENERATOR_VERSION }))
    .digest("hex")
    .slice(0, 12);
}

/**
 * Returns the cached data set for `spec`, generating it first when missing (with a progress
 * bar). Generation writes a temporary file and renames it into place at the end, so an
 * interrupted run never leaves a half-built file in the cache.
 */
export async function ensureDataset(spec: DatasetSpec, dataDir: string): Promise<DatasetInfo> {
  mkdirSync(dataDir, { recursive: true });
  const base = `${spec.name}-${spec.schema}-${spec.sessions}s-${spec.messages}m-${spec.bigSessionMessages}b-seed${spec.seed}-${cacheKey(spec)}`;
  const path = join(dataDir, `${base}.db`);
  const infoPath = join(dataDir, `${base}.json`);
  if (existsSync(path) && existsSync(infoPath)) {
    return JSON.parse(readFileSync(infoPath, "utf8")) as DatasetInfo;
  }
  const tmp = `${path}.tmp-${process.pid}`;
  removeSidecars(tmp);
  rmSync(tmp, { force: true });
  const started = performance.now();
  if (spec.schema === "v11") {
    // The exact v11 schema, as the store creates it. One writer, so no cross-process queue:
    // that would leave a `<tmp>-writers/` folder beside a name that is renamed away.
    const store = await openSessionStore({ path: tmp, fairWrites: false });
    await store.close();
  } else {
    createV10File(tmp);
  }
  const counts = generateRows(tmp, spec);
  removeSidecars(tmp);
  renameSync(tmp, path);
  const info: DatasetInfo = {
    spec,
    path,
    ...counts,
    fileBytes: statSync(path).size,
    generatedInMs: performance.now() - started,
    generatorVersion: GENERATOR_VERSION,
  };
  writeFileSync(infoPath, `${JSON.stringify(info, null, 2)}\n`);
  return info;
}

/** Removes what SQLite and the store keep beside the file at `path` (journals, the writers' folder). */
function removeSidecars(path: string): void {
  for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(path + suffix, { force: true });
  rmSync(`${path}-writers`, { recursive: true, force: true });
}

/** The reference's v10 file: core tables at their current columns, single-column FTS tables. */
export const V10_FTS_SQL: readonly string[] = [
  "CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(content, content=messages, content_rowid=id)",
  `CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END`,
  `CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);
END`,
  `CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END`,
  "CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_trigram USING fts5(content, content=messages, content_rowid=id, tokenize='trigram')",
  `CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, new.content);
END`,
  `CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content) VALUES('delete', old.id, old.content);
END`,
  `CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_update AFTER UPDATE ON messages BEGIN
    INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content) VALUES('delete', old.id, old.content);
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, new.content);
END`,
];

function createV10File(path: string): void {
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.exec("BEGIN");
    for (const sql of Object.values(CORE_TABLES)) db.exec(sql);
    for (const sql of Object.values(CORE_INDEXES)) db.exec(sql);
    db.exec(TITLE_INDEX_SQL);
    for (const sql of V10_FTS_SQL) db.exec(sql);
    db.exec("INSERT INTO schema_version(version) VALUES (10)");
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/** Splits `total` messages over `sessions` sessions with a skewed (log-normal) distribution. */
function messagesPerSession(rng: SeededRandom, sessions: number, total: number): number[] {
  if (sessions === 0) return [];
  const weights = Array.from({ length: sessions }, () => rng.logNormal(1, 1.1));
  const spare = Math.max(0, total - sessions);
  const sum = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((w) => 1 + Math.floor((w / sum) * spare));
  let missing = total - counts.reduce((a, b) => a + b, 0);
  for (let i = 0; missing > 0; i = (i + 1) % sessions, missing--) counts[i]!++;
  return counts;
}

function pickSource(rng: SeededRandom): string {
  let x = rng.next();
  for (const [source, share] of SOURCES) {
    x -= share;
    if (x < 0) return source;
  }
  return "cli";
}

const titleWords = new ZipfPicker(
  ENGLISH_WORDS.filter((w) => /^[a-z]{4,}$/.test(w)),
  0.6,
);

function sessionId(rng: SeededRandom, startedAt: number, used: Set<string>): string {
  const d = new Date(startedAt * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}_${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
  for (;;) {
    const id = `${stamp}_${Math.floor(rng.next() * 0xffffff)
      .toString(16)
      .padStart(6, "0")}`;
    if (!used.has(id)) {
      used.add(id);
      return id;
    }
  }
}

interface SessionPlan {
  id: string;
  source: string;
  model: string;
  parent: string | null;
  startedAt: number;
  title: string | null;
  endReason: string | null;
}

function generateRows(
  path: string,
  spec: DatasetSpec,
): Omit<DatasetInfo, "spec" | "path" | "fileBytes" | "generatedInMs" | "generatorVersion"> {
  const rng = new SeededRandom(spec.seed);
  const textRng = rng.fork(1);
  const conversation = new ConversationGenerator(textRng);
  const counts = messagesPerSession(rng.fork(2), spec.sessions, spec.messages);
  const total = spec.messages + spec.bigSessionMessages;
  const bar = new LongStepProgress(`generating ${spec.name} (${spec.schema})`, total);

  const db = new Database(path);
  // Bulk load: no journal, no sync, no FK checks (the generator keeps references consistent).
  // The file is switched back to WAL at the end, as the store and the reference leave it.
  db.pragma("journal_mode = OFF");
  db.pragma("synchronous = OFF");
  db.pragma("foreign_keys = OFF");
  db.pragma("cache_size = -262144");
  const insertSession =
    db.prepare(`INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt,
    parent_session_id, started_at, ended_at, end_reason, message_count, tool_call_count, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, reasoning_tokens, billing_provider, estimated_cost_usd, cost_status,
    cost_source, title, api_call_count)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertMessage = db.prepare(`INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls,
    tool_name, timestamp, token_count, finish_reason, reasoning) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);

  let done = 0;
  let cjk = 0;
  let inBatch = 0;
  db.exec("BEGIN");
  const writeSession = (plan: SessionPlan, messageCount: number, gapSeconds: () => number): number => {
    conversation.reset();
    const rows: GeneratedMessage[] = [];
    for (let i = 0; i < messageCount; i++) rows.push(conversation.next());
    let ts = plan.startedAt;
    const stamps = rows.map(() => {
      ts += gapSeconds();
      return ts;
    });
    let toolCalls = 0;
    let output = 0;
    let apiCalls = 0;
    for (const m of rows) {
      if (m.role === "assistant") {
        apiCalls++;
        output += m.token_count ?? 0;
        if (m.tool_call_list !== null) toolCalls += m.tool_call_list.length;
      }
    }
    const endedAt = plan.endReason === null ? null : ts + 5;
    insertSession.run(
      plan.id,
      plan.source,
      rng.chance(0.3) ? `user-${rng.int(1, 500)}` : null,
      plan.model,
      rng.chance(0.5) ? JSON.stringify({ max_iterations: 90, temperature: 0.7 }) : null,
      `You are Hermes, a helpful agent. ${"Follow the user's instructions carefully. ".repeat(rng.int(10, 30))}`,
      plan.parent,
      plan.startedAt,
      endedAt,
      plan.endReason,
      rows.length,
      toolCalls,
      output * 6,
      output,
      output * 3,
      output,
      Math.floor(output / 4),
      "openrouter",
      output * 0.000004,
      "estimated",
      "pricing_table",
      plan.title,
      apiCalls,
    );
    for (let i = 0; i < rows.length; i++) {
      const m = rows[i]!;
      if (m.content !== null && /[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]/.test(m.content)) cjk++;
      insertMessage.run(
        plan.id,
        m.role,
        m.content,
        m.tool_call_id,
        m.tool_calls,
        m.tool_name,
        stamps[i]!,
        m.token_count,
        m.finish_reason,
        m.reasoning,
      );
      done++;
      if (++inBatch >= 20_000) {
        db.exec("COMMIT; BEGIN");
        inBatch = 0;
        bar.update(done);
      }
    }
    return endedAt ?? ts;
  };

  const used = new Set<string>();
  if (spec.bigSessionMessages > 0) {
    used.add(BIG_SESSION_ID);
    writeSession(
      {
        id: BIG_SESSION_ID,
        source: "cli",
        model: MODELS[0]!,
        parent: null,
        startedAt: EPOCH - 86_400 * 30,
        title: "The very long session",
        endReason: null,
      },
      spec.bigSessionMessages,
      () => 1 + rng.next(),
    );
  }

  let previous: { id: string; endedAt: number; endReason: string | null; title: string | null } | null = null;
  const ids: string[] = [];
  for (let i = 0; i < spec.sessions; i++) {
    let startedAt = EPOCH + (i / Math.max(1, spec.sessions)) * SPAN_SECONDS + rng.next() * 60;
    let parent: string | null = null;
    let title: string | null = rng.chance(0.3)
      ? `${titleWords.pick(rng)} ${titleWords.pick(rng)} ${i}`
      : null;
    let source = pickSource(rng);
    if (previous !== null && (previous.endReason === "compression" || previous.endReason === "branched")) {
      // A continuation (compression) or a branch starts after its parent ended.
      parent = previous.id;
      startedAt = Math.max(startedAt, previous.endedAt + 1);
      if (previous.title !== null) title = `${previous.title.replace(/ #\d+$/, "")} #${i}`;
    } else if (ids.length > 0 && rng.chance(0.03)) {
      parent = ids[rng.int(Math.max(0, ids.length - 50), ids.length - 1)]!;
      source = "delegate";
    }
    const r = rng.next();
    const endReason = r < 0.08 ? "compression" : r < 0.1 ? "branched" : r < 0.9 ? "user_exit" : null;
    const id = sessionId(rng, startedAt, used);
    const endedAt = writeSession(
      { id, source, model: rng.pick(MODELS), parent, startedAt, title, endReason },
      counts[i]!,
      () => 1 + rng.next() * 90,
    );
    ids.push(id);
    previous = { id, endedAt, endReason, title };
  }
  db.exec("COMMIT");
  db.pragma("journal_mode = WAL");
  db.close();
  bar.finish();
  return {
    sessions: spec.sessions + (spec.bigSessionMessages > 0 ? 1 : 0),
    messages: done,
    cjkMessages: cjk,
  };
}
