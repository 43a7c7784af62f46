import { readFileSync } from "node:fs";

/** Sessions and messages of a JSONL export file (its header line aside). */
export function jsonlCounts(file: string): { sessions: number; messages: number } {
  const lines = readFileSync(file, "utf8").trimEnd().split("\n").slice(1);
  const messages = lines.reduce((n, l) => n + (JSON.parse(l) as { messages: unknown[] }).messages.length, 0);
  return { sessions: lines.length, messages };
}
