import { readFileSync } from "node:fs";

/** Sessions and messages of a JSONL export file (its header line aside). */
export function jsonlCounts(file: string): { sessions: number; messages: number } {
  const lines = readFileSync(file, "utf8").trimEnd().split("\n").slice(1);
  const messages = lines.reduce((n, l) => n + (JSON.parse(l) as { messages: unknown[] }).messages.length, 0);
  return { sessions: lines.length, messages };
}

/** A message count as the CLI words it: "1 message", "1,204 messages". */
export function messagesText(n: number): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? "message" : "messages"}`;
}
