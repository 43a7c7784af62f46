import {
  type ExportReport,
  type ExportStreamOptions,
  exportFilter,
  type JsonlDestination,
  jsonlHeaderLine,
  SOURCE_SCHEMA_META_KEY,
  sinkFor,
} from "@hermes/core";
import { SCHEMA_VERSION } from "@hermes/schema";
import type { PgStoreContext } from "../pg-store-context.js";
import { exportSessions } from "./export-stream.js";

/**
 * The `schema_version` an export names: the newest version of the data imported or mirrored
 * here (`SOURCE_SCHEMA_META_KEY`), else the v11 of the reference's files.
 */
async function sourceSchemaVersion(ctx: PgStoreContext): Promise<number> {
  const row = await ctx.read((db) =>
    db.selectFrom("state_meta").select("value").where("key", "=", SOURCE_SCHEMA_META_KEY).executeTakeFirst(),
  );
  const version = Number(row?.value);
  return Number.isSafeInteger(version) && version > 0 ? version : SCHEMA_VERSION;
}

/** Writes the JSONL interchange format (header naming the data's schema version, then one session per line). */
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
    await sink.write(jsonlHeaderLine(ctx.now(), o, await sourceSchemaVersion(ctx)));
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
