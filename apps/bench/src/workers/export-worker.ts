/**
 * One side of the `export` scenario in its own process, so its peak RSS is its own: streams
 * every session with its messages (the store's `exportStream`, or a raw cursor over sessions
 * and one query per session) and serializes each as a JSONL line.
 */
import { openSessionStore } from "@hermes/store";
import { peakRssMb } from "../peak-rss.js";
import { openRawConnection } from "../raw-connection.js";
import { isNotImplemented } from "../store-capability.js";

/** The worker's report. */
export type ExportWorkerReport =
  | {
      type: "done";
      items: number;
      bytes: number;
      elapsedMs: number;
      itemLatenciesMs: number[];
      peakRssMb: number;
    }
  | { type: "unavailable"; reason: string; peakRssMb: number }
  | { type: "error"; reason: string; peakRssMb: number };

function parseToolCalls(text: unknown): unknown {
  if (typeof text !== "string" || text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return [];
  }
}

async function* rawExport(path: string): AsyncGenerator<unknown> {
  const db = openRawConnection(path);
  try {
    // A second connection reads the messages while the first one's cursor walks the sessions
    // (better-sqlite3 forbids other statements on a connection while it iterates).
    const db2 = openRawConnection(path);
    const messages = db2.prepare("SELECT * FROM messages WHERE session_id = ? ORDER BY timestamp, id");
    db2.exec("BEGIN");
    try {
      for (const s of db.prepare("SELECT * FROM sessions ORDER BY started_at, id").iterate() as Iterable<{
        id: string;
      }>) {
        const rows = (messages.all(s.id) as Array<Record<string, unknown>>).map((m) => ({
          ...m,
          tool_calls: parseToolCalls(m.tool_calls),
        }));
        yield { ...s, messages: rows };
      }
    } finally {
      db2.exec("COMMIT");
      db2.close();
    }
  } finally {
    db.close();
  }
}

/** `store`: the store as a short-lived process opens it (the export runs on its thread); `pool`: its read worker warmed first, so the export streams from it. */
export type ExportMode = "store" | "pool" | "raw";

process.once("message", async (request: { mode: ExportMode; path: string }) => {
  let report: ExportWorkerReport;
  try {
    let source: AsyncIterable<unknown>;
    let close = async () => {};
    if (request.mode !== "raw") {
      const store = await openSessionStore({ path: request.path });
      close = () => store.close();
      if (request.mode === "pool") await store.readPool?.warmUp(1);
      const exportStream = (store as unknown as { exportStream?: (o?: object) => AsyncIterable<unknown> })
        .exportStream;
      if (typeof exportStream !== "function") {
        await close();
        report = {
          type: "unavailable",
          reason: "not available yet: SessionStore.exportStream does not exist",
          peakRssMb: peakRssMb(),
        };
        process.send?.(report, () => process.exit(0));
        return;
      }
      source = exportStream.call(store, {});
    } else {
      source = rawExport(request.path);
    }
    const latencies: number[] = [];
    let items = 0;
    let bytes = 0;
    const t0 = performance.now();
    let last = t0;
    for await (const item of source) {
      const line = typeof item === "string" ? item : `${JSON.stringify(item)}\n`;
      bytes += line.length;
      items++;
      const now = performance.now();
      latencies.push(now - last);
      last = now;
    }
    const elapsedMs = performance.now() - t0;
    await close();
    report = { type: "done", items, bytes, elapsedMs, itemLatenciesMs: latencies, peakRssMb: peakRssMb() };
  } catch (error) {
    report = isNotImplemented(error)
      ? {
          type: "unavailable",
          reason: "not available yet: exportStream is not implemented",
          peakRssMb: peakRssMb(),
        }
      : {
          type: "error",
          reason: error instanceof Error ? error.message : String(error),
          peakRssMb: peakRssMb(),
        };
  }
  process.send?.(report, () => process.exit(0));
});
