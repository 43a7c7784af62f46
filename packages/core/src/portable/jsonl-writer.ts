import { once } from "node:events";
import { type FileHandle, open, rename, rm } from "node:fs/promises";
import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import type { ExportEvent, ExportStreamOptions } from "./export-options.js";
import { canonicalSession, jsonlHeader, type PortableSession, sessionToJsonLine } from "./jsonl-format.js";

/** What an export wrote. */
export interface ExportReport {
  sessions: number;
  messages: number;
  /** Bytes of JSONL written (UTF-8). */
  bytes: number;
}

/** Where JSONL goes: a file path, or any writable stream (left open). */
export type JsonlDestination = string | NodeJS.WritableStream;

/** Flush to the destination once this many characters are buffered. */
const CHUNK_CHARS = 1 << 20;

/** A buffered writer honouring the destination's backpressure. */
export interface ChunkSink {
  write(text: string): Promise<void>;
  finish(): Promise<number>;
  abort(): Promise<void>;
}

async function fileSink(path: string): Promise<ChunkSink> {
  // Written beside the target and renamed at the end: a crash never leaves a truncated file
  // under the final name. 0600: exports hold whole conversations.
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  let handle: FileHandle;
  try {
    handle = await open(temp, "wx", 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InvalidArgumentError(
      "destination",
      `cannot write ${path} (${code ?? (error as Error).message})`,
    );
  }
  let buffered = "";
  let bytes = 0;
  const flush = async () => {
    if (buffered.length === 0) return;
    const data = Buffer.from(buffered, "utf8");
    buffered = "";
    bytes += data.length;
    await handle.write(data);
  };
  return {
    async write(text) {
      buffered += text;
      if (buffered.length >= CHUNK_CHARS) await flush();
    },
    async finish() {
      await flush();
      await handle.sync();
      await handle.close();
      await rename(temp, path);
      return bytes;
    },
    async abort() {
      await handle.close().catch(() => {});
      await rm(temp, { force: true });
    },
  };
}

function streamSink(stream: NodeJS.WritableStream): ChunkSink {
  let buffered = "";
  let bytes = 0;
  const flush = async () => {
    if (buffered.length === 0) return;
    const text = buffered;
    buffered = "";
    bytes += Buffer.byteLength(text, "utf8");
    if (!stream.write(text)) await once(stream, "drain");
  };
  return {
    async write(text) {
      buffered += text;
      if (buffered.length >= CHUNK_CHARS) await flush();
    },
    async finish() {
      await flush();
      return bytes;
    },
    async abort() {},
  };
}

/** A buffered writer for a destination (`INVALID_ARGUMENT` for one that cannot be written). */
export async function sinkFor(destination: JsonlDestination): Promise<ChunkSink> {
  if (typeof destination === "string") {
    if (destination.length === 0 || destination.includes("\0")) {
      throw new InvalidArgumentError("destination", "destination must be a file path or a writable stream");
    }
    return fileSink(destination);
  }
  if (typeof destination !== "object" || destination === null || typeof destination.write !== "function") {
    throw new InvalidArgumentError("destination", "destination must be a file path or a writable stream");
  }
  return streamSink(destination);
}

/**
 * The first line of a JSONL export (with its newline): the {@link jsonlHeader} naming the
 * filter the export was made with.
 */
export function jsonlHeaderLine(
  now: number,
  o: ExportStreamOptions | undefined,
  schemaVersion?: number,
): string {
  const opts = o ?? {};
  const headerFilter: Record<string, unknown> = {};
  if (opts.source !== undefined) headerFilter.source = opts.source;
  if (opts.sessionIds !== undefined) headerFilter.session_ids = opts.sessionIds;
  if (opts.since !== undefined) headerFilter.since = opts.since;
  return `${JSON.stringify(jsonlHeader(now, headerFilter, schemaVersion))}\n`;
}

/**
 * Writes an export as JSONL in constant memory, whatever the size of a session: the header line
 * (`now`, the filter of `o`, the source's `schemaVersion`), then each session's line as its
 * events come, message page by message page (the bytes are those of `JSON.stringify` of the
 * whole session; the events carry canonical rows). The sink is finished, or aborted on failure
 * (a file is then removed).
 */
export async function writeJsonlExport(
  sink: ChunkSink,
  now: number,
  o: ExportStreamOptions | undefined,
  events: AsyncIterable<ExportEvent>,
  schemaVersion?: number,
): Promise<ExportReport> {
  const report: ExportReport = { sessions: 0, messages: 0, bytes: 0 };
  try {
    await sink.write(jsonlHeaderLine(now, o, schemaVersion));
    let first = true;
    for await (const event of events) {
      if (event.kind === "session") {
        // `{…columns…,"messages":[]}` minus its closing `]}`: messages follow one by one.
        const head = JSON.stringify({ ...canonicalSession(event.session), messages: [] });
        await sink.write(head.slice(0, -2));
        first = true;
      } else if (event.kind === "messages") {
        let text = "";
        for (const m of event.messages) {
          text += first ? JSON.stringify(m) : `,${JSON.stringify(m)}`;
          first = false;
        }
        report.messages += event.messages.length;
        await sink.write(text);
      } else {
        await sink.write("]}\n");
        report.sessions++;
      }
    }
    report.bytes = await sink.finish();
    return report;
  } catch (error) {
    await sink.abort();
    throw error;
  }
}

/**
 * JSONL lines (header first, each ending in `\n`) for any sessions, e.g. from `exportStream` or
 * a filtered or transformed copy of it.
 *
 * @example
 * for await (const line of sessionsToJsonl(store.exportStream({ source: "cli" }))) out.write(line)
 */
export async function* sessionsToJsonl(
  sessions: AsyncIterable<PortableSession> | Iterable<PortableSession>,
  o: { exportedAt?: number } = {},
): AsyncGenerator<string, void, undefined> {
  yield `${JSON.stringify(jsonlHeader(o.exportedAt ?? Date.now() / 1000))}\n`;
  for await (const s of sessions) yield `${sessionLine(s)}\n`;
}

function sessionLine(s: PortableSession): string {
  if (typeof s !== "object" || s === null || !Array.isArray(s.messages)) {
    throw new InvalidArgumentError("sessions", "each session must be an object with a messages array");
  }
  return sessionToJsonLine(s);
}

/**
 * Writes sessions (any iterable of portable sessions) as a JSONL file or to a stream.
 *
 * @example
 * await writeJsonl(store.exportStream({ since }), "/backups/sessions.jsonl")
 */
export async function writeJsonl(
  sessions: AsyncIterable<PortableSession> | Iterable<PortableSession>,
  destination: JsonlDestination,
): Promise<ExportReport> {
  const sink = await sinkFor(destination);
  const report: ExportReport = { sessions: 0, messages: 0, bytes: 0 };
  try {
    await sink.write(`${JSON.stringify(jsonlHeader(Date.now() / 1000))}\n`);
    for await (const s of sessions) {
      await sink.write(`${sessionLine(s)}\n`);
      report.sessions++;
      report.messages += s.messages.length;
    }
    report.bytes = await sink.finish();
    return report;
  } catch (error) {
    await sink.abort();
    throw error;
  }
}
