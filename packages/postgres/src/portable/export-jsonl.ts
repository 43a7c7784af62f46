import {
  type ExportReport,
  type ExportStreamOptions,
  exportFilter,
  type JsonlDestination,
  jsonlHeaderLine,
  sinkFor,
} from "@hermes/core";
import type { PgStoreContext } from "../pg-store-context.js";
import { exportSessions } from "./export-stream.js";

/** Writes the JSONL interchange format (header, then one session per line). */
export async function exportJsonl(
  ctx: PgStoreContext,
  destination: JsonlDestination,
  o?: ExportStreamOptions,
): Promise<ExportReport> {
  ctx.check();
  const filter = exportFilter(o);
  const sink = await sinkFor(destination);
  const report: ExportReport = { sessions: 0, messages: 0, bytes: 0 };
  try {
    await sink.write(jsonlHeaderLine(ctx.now(), o));
    for await (const s of exportSessions(ctx, filter)) {
      await sink.write(`${JSON.stringify(s)}\n`);
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
