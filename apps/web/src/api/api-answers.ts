import type {
  Lineage,
  MessagePage,
  SearchHit,
  SessionPageRow,
  SessionRow,
  UsageStatsRow,
} from "@hermes/core";

// The JSON bodies of the API's answers: one definition for the routes, the pages and the tests.

/** `GET /api/filters`: every source and model with sessions. */
export interface FiltersAnswer {
  sources: string[];
  models: string[];
}

/** A listed session: a page row without its system prompt and model config (most of its bytes). */
export type ListedSession = Omit<SessionPageRow, "system_prompt" | "model_config">;

/** `GET /api/sessions`. */
export interface SessionsAnswer {
  sessions: ListedSession[];
  nextCursor: string | null;
}

/** `GET /api/sessions/:id`. */
export interface SessionAnswer {
  session: SessionRow;
  lineage: Lineage;
  /** The start of its first user message (`""` when none): the name of an untitled session. */
  preview: string;
}

/** `GET /api/sessions/:id/messages`. */
export type MessagesAnswer = MessagePage;

/** `GET /api/search`: the hits, and the title and name of each hit's session. */
export interface SearchAnswer {
  hits: SearchHit[];
  titles: Record<string, string | null>;
  /** The name of each hit's session (`sessionDisplayName` of `@hermes/core`). */
  names: Record<string, string>;
}

/** `GET /api/usage`. */
export interface UsageAnswer {
  groupBy: string;
  rows: UsageStatsRow[];
}

/** `PUT /api/sessions/:id/title`. */
export interface RenameAnswer {
  id: string;
  title: string | null;
}

/** `DELETE /api/sessions/:id`. */
export interface DeleteAnswer {
  id: string;
  deleted: true;
}

/** `POST /api/prune`. */
export interface PruneAnswer {
  removed: number;
}

/** Every answer that is not a success. */
export interface ErrorAnswer {
  error: string;
  message: string;
}
