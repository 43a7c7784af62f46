import type {
  DeleteAnswer,
  FiltersAnswer,
  MessagesAnswer,
  PruneAnswer,
  RenameAnswer,
  SearchAnswer,
  SessionAnswer,
  SessionsAnswer,
  UsageAnswer,
} from "../src/api/api-answers.js";

export type { Lineage, LineageNode, MessageRow, SearchHit, SessionRow, UsageStatsRow } from "@hermes/core";
export type { ListedSession } from "../src/api/api-answers.js";

const meta = (name: string) => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? "";

/** Whether the server was started with `--allow-writes`. */
export const WRITABLE = meta("hermes-writable") === "true";
const CSRF = meta("hermes-csrf");

/** An API answer that was not a success, with the server's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Params = Record<string, string | number | string[] | undefined | null>;

/** `/api/<path>?params` (repeatable parameters as arrays; empty values left out). */
export function apiUrl(path: string, params: Params = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === "") continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(key, String(v));
  }
  const query = search.toString();
  return `/api/${path}${query ? `?${query}` : ""}`;
}

async function request<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, { credentials: "same-origin", ...init });
  const body = (await res.json().catch(() => null)) as { error?: string; message?: string } | null;
  if (!res.ok) {
    throw new ApiError(
      res.status,
      body?.error ?? "HTTP",
      body?.message ?? `The server answered ${res.status}`,
    );
  }
  return body as T;
}

/** A write (`--allow-writes`), with the page's CSRF token. */
function write<T>(method: string, path: string, body?: unknown): Promise<T> {
  return request<T>(`/api/${path}`, {
    method,
    headers: { "content-type": "application/json", "x-hermes-csrf": CSRF },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

export interface SessionFilters {
  source?: string[];
  model?: string[];
  from?: string;
  to?: string;
  title?: string;
}

export const api = {
  filters: () => request<FiltersAnswer>(apiUrl("filters")),
  sessions: (f: SessionFilters, cursor?: string | null, limit = 50) =>
    request<SessionsAnswer>(apiUrl("sessions", { ...f, cursor, limit })),
  session: (id: string) => request<SessionAnswer>(apiUrl(`sessions/${encodeURIComponent(id)}`)),
  messages: (
    id: string,
    p: {
      from?: "start" | "end";
      after?: number;
      before?: number;
      around?: number;
      /** The page around the current version of the message with this stable id (v31). */
      uid?: string;
      limit?: number;
    },
  ) => request<MessagesAnswer>(apiUrl(`sessions/${encodeURIComponent(id)}/messages`, p)),
  search: (p: { q: string; source?: string[]; role?: string[]; offset?: number; limit?: number }) =>
    request<SearchAnswer>(apiUrl("search", p)),
  usage: (p: { groupBy: string; from?: string; to?: string; source?: string }) =>
    request<UsageAnswer>(apiUrl("usage", p)),
  exportUrl: (id: string, format: "jsonl" | "markdown") =>
    apiUrl(`sessions/${encodeURIComponent(id)}/export`, { format }),
  rename: (id: string, title: string | null) =>
    write<RenameAnswer>("PUT", `sessions/${encodeURIComponent(id)}/title`, { title }),
  remove: (id: string) => write<DeleteAnswer>("DELETE", `sessions/${encodeURIComponent(id)}`),
  prune: (olderThanDays: number, source?: string) =>
    write<PruneAnswer>("POST", "prune", { olderThanDays, ...(source ? { source } : {}) }),
};
