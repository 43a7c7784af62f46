import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { REFERENCE_SCHEMA_SQL } from "./temp-dir.js";

export interface SchemaObject {
  type: string;
  name: string;
  sql: string;
}

/** The objects listed in `hermes-v11-schema.sql`, with their SQL text as stored. */
export function referenceSchema(): SchemaObject[] {
  const text = readFileSync(REFERENCE_SCHEMA_SQL, "utf8");
  const out: SchemaObject[] = [];
  const re = /^-- (table|index|trigger|view) (\S+) on \S+\n([\s\S]*?);\n(?=\n|$)/gm;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push({ type: m[1] as string, name: m[2] as string, sql: m[3] as string });
  }
  return out.sort((a, b) => `${a.type} ${a.name}`.localeCompare(`${b.type} ${b.name}`));
}

/** The objects of a database file that have SQL text (autoindexes have none). */
export function schemaOf(path: string): SchemaObject[] {
  const db = new Database(path, { readonly: true });
  try {
    return (
      db.prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL").all() as SchemaObject[]
    ).sort((a, b) => `${a.type} ${a.name}`.localeCompare(`${b.type} ${b.name}`));
  } finally {
    db.close();
  }
}
