import { once } from "node:events";
import type { Writable } from "node:stream";

/** Prints a value as indented JSON on stdout (the `--json` output of every command). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Writes a chunk and waits when the stream's buffer is full, so a large export streams in
 * constant memory instead of queueing everything in the stream.
 */
export async function writeChunk(stream: Writable, chunk: string): Promise<void> {
  if (!stream.write(chunk)) await once(stream, "drain");
}
