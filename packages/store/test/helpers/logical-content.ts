import Database from "better-sqlite3";

/**
 * Every row of every ordinary table of a file (full-text tables and their storage aside, as
 * FTS rebuilds may lay pages out differently), as sorted JSON lines per table: two files
 * with equal results hold the same sessions, messages, flags, prompts and metadata.
 */
export function logicalContent(path: string): Record<string, string[]> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const virtual = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")
      .pluck()
      .all() as string[];
    const tables = (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .pluck()
        .all() as string[]
    ).filter((t) => !virtual.some((v) => t.startsWith(`${v}_`)));
    const out: Record<string, string[]> = {};
    for (const t of tables) {
      const rows = db.prepare(`SELECT * FROM "${t}"`).all();
      out[t] = rows.map((r) => JSON.stringify(r)).sort();
    }
    out["pragma:application_id"] = [String(db.pragma("application_id", { simple: true }))];
    out["pragma:user_version"] = [String(db.pragma("user_version", { simple: true }))];
    return out;
  } finally {
    db.close();
  }
}
