import type { SessionRow } from "@hermes/schema";
import {
  optionalNumber,
  optionalString,
  optionalStringArray,
  optionsObject,
} from "../validation/arguments.js";
import type { PortableMessage } from "./jsonl-format.js";

/** Most sessions `exportAll` returns (as the reference's `search_sessions(limit=100000)`). */
export const EXPORT_ALL_LIMIT = 100_000;

/** Which sessions an export covers. All filters combine with AND. */
export interface ExportStreamOptions {
  /** Only sessions of this source (`cli`, `telegram`, …). */
  source?: string;
  /** Only these sessions (unknown ids are skipped). */
  sessionIds?: string[];
  /** Only sessions started at or after this time (Unix epoch seconds). */
  since?: number;
  /**
   * Aborts the export: the call (or the stream's next step) rejects with `ABORTED` (`AbortedError`). The SQLite
   * store checks it before starting, and ends the read worker running the query when it aborts
   * mid-query (the rejection follows within milliseconds); a backend may only check it between steps.
   */
  signal?: AbortSignal;
}

/**
 * One step of a streaming export: a session's row, a page of its messages, its end. A backend
 * that yields these gets the constant-memory JSONL writer (`writeJsonlExport`).
 */
export type ExportEvent =
  | { readonly kind: "session"; readonly session: SessionRow }
  | { readonly kind: "messages"; readonly messages: PortableMessage[] }
  | { readonly kind: "end"; readonly session: SessionRow };

/** Checked export options, as query parameters: `ids` is the JSON array of `sessionIds`. */
export interface ExportFilter {
  source: string | null;
  ids: string | null;
  since: number | null;
}

/** Checks export options (`INVALID_ARGUMENT`) and turns them into query parameters. */
export function exportFilter(o: ExportStreamOptions | undefined): ExportFilter {
  const opts = optionsObject("options", o);
  const ids = optionalStringArray("sessionIds", opts.sessionIds);
  return {
    source: optionalString("source", opts.source),
    ids: ids === null ? null : JSON.stringify(ids),
    since: optionalNumber("since", opts.since),
  };
}
