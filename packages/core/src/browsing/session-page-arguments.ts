import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import { previewOf } from "../listing/preview.js";
import { type SessionFilterOptions, sessionFilterArguments } from "../listing/session-filter-arguments.js";
import { toSessionViewFields } from "../read-model/session-view-fields.js";
import type { SessionRow } from "../types.js";
import {
  nonNegativeInt,
  optionalString,
  optionalStringArray,
  optionsObject,
} from "../validation/arguments.js";

/** Options of `listSessionPage`. */
export interface SessionPageOptions extends SessionFilterOptions {
  /** Only sessions of these sources. */
  sources?: string[];
  /** Sessions per page: 1–500, default 50. */
  limit?: number;
  /** `nextCursor` of the previous page; absent for the first page. */
  cursor?: string;
}

/**
 * A listed session: every column, its own `last_active` and `preview` (as `listSessionsRich`),
 * and the figures of its chain, the compression continuations and sub-agent runs below it.
 */
export type SessionPageRow = SessionRow & {
  last_active: number;
  preview: string;
  /** The newest activity of the session and its chain: what the page is ordered by. */
  chain_last_active: number;
  /** Sessions of the chain below this one (any depth); 0 for a session on its own. */
  chain_sessions: number;
  /** The session or a session of its chain has not ended. */
  chain_open: boolean;
};

/** One page of `listSessionPage`. */
export interface SessionPage {
  sessions: SessionPageRow[];
  /** Pass as `cursor` for the next page; `null` on the last page. */
  nextCursor: string | null;
}

/** The validated arguments of `listSessionPage` (`INVALID_ARGUMENT`), for every backend. */
export interface SessionPageArguments {
  sources: string[] | null;
  models: string[] | null;
  startedAfter: number | null;
  startedBefore: number | null;
  /** A LIKE pattern (escaped with `\`) for the title, and one for an id prefix; `null`: no filter. */
  titlePattern: string | null;
  idPattern: string | null;
  limit: number;
  /** Sessions strictly after this position of the order. */
  after: { key: number; startedAt: number; id: string } | null;
}

const MAX_PAGE = 500;

/** The cursor of the row a page ended with: its place in the order, opaque to callers. */
export function sessionPageCursor(row: {
  chain_last_active: number;
  started_at: number;
  id: string;
}): string {
  return Buffer.from(JSON.stringify([row.chain_last_active, row.started_at, row.id])).toString("base64url");
}

function decodeCursor(cursor: string): SessionPageArguments["after"] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = null;
  }
  if (
    !Array.isArray(value) ||
    value.length !== 3 ||
    typeof value[0] !== "number" ||
    typeof value[1] !== "number" ||
    typeof value[2] !== "string"
  ) {
    throw new InvalidArgumentError("cursor", "cursor is not one that listSessionPage returned");
  }
  return { key: value[0], startedAt: value[1], id: value[2] };
}

/** Checks the options of `listSessionPage` (`INVALID_ARGUMENT`), for every backend. */
export function sessionPageArguments(o: SessionPageOptions | undefined): SessionPageArguments {
  const opts = optionsObject("options", o);
  const limit = nonNegativeInt("limit", opts.limit, 50, MAX_PAGE);
  if (limit === 0) throw new InvalidArgumentError("limit", "limit must be at least 1");
  const cursor = optionalString("cursor", opts.cursor);
  const list = (name: string, value: unknown) => {
    const items = optionalStringArray(name, value);
    return items === null || items.length === 0 ? null : items;
  };
  return {
    sources: list("sources", opts.sources),
    ...sessionFilterArguments(opts),
    limit,
    after: cursor ? decodeCursor(cursor) : null,
  };
}

/** Turns the page's rows (one more than `limit` when a next page exists) into a page. */
export function finishSessionPage(rows: SessionPageRow[], limit: number): SessionPage {
  const more = rows.length > limit;
  const sessions = more ? rows.slice(0, limit) : rows;
  for (const row of sessions) {
    row.preview = previewOf(row.preview);
    row.chain_open = Boolean(row.chain_open);
    toSessionViewFields(row);
  }
  const last = sessions[sessions.length - 1];
  return { sessions, nextCursor: more && last !== undefined ? sessionPageCursor(last) : null };
}

/**
 * Whether a page has a filter (source, model, title, dates). A filter leaves few of the newest
 * chains on the page, so proving it from the newest activity would read most of the sessions
 * in rounds: both adapters order the sessions the filter keeps instead.
 */
export function isFilteredPage(a: SessionPageArguments): boolean {
  return (
    a.sources !== null ||
    a.models !== null ||
    a.titlePattern !== null ||
    a.startedAfter !== null ||
    a.startedBefore !== null
  );
}
