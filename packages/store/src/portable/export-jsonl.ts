import {
  type ExportEvent,
  type ExportFilter,
  type ExportReport,
  type ExportStreamOptions,
  exportFilter,
  type JsonlDestination,
  sinkFor,
  writeJsonlExport,
} from "@hermes/core";
import type { StoreContext } from "../store-context.js";
import { exportEvents } from "./export-stream.js";

/**
 * Writes the store's sessions as JSONL (`writeJsonlExport` of `@hermes/core`) in constant memory,
 * from one snapshot read page by page. The first line is the header, naming the file's
 * `schema_version` (11, or a newer agent's version). `events` replaces the
 * in-thread read of the snapshot (the read pool streams the same events from a worker).
 */
export async function exportJsonl(
  ctx: StoreContext,
  destination: JsonlDestination,
  o?: ExportStreamOptions,
  events: (filter: ExportFilter) => AsyncIterable<ExportEvent> = (filter) => exportEvents(ctx, filter),
): Promise<ExportReport> {
  const filter = exportFilter(o);
  const sink = await sinkFor(destination);
  return writeJsonlExport(sink, ctx.now(), o, events(filter), ctx.reads?.schemaVersion ?? undefined);
}
