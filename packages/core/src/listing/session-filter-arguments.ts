import { escapeLike } from "../sessions/escape-like.js";
import { optionalNumber, optionalString, optionalStringArray } from "../validation/arguments.js";

/**
 * Filters of a session listing beyond its sources, shared by `listSessionPage` and
 * `listSessionsRich`. All combine with AND.
 */
export interface SessionFilterOptions {
  /** Only sessions of these models. */
  models?: string[];
  /** Sessions started at or after this time (Unix epoch seconds). */
  startedAfter?: number;
  /** Sessions started before this time (Unix epoch seconds). */
  startedBefore?: number;
  /** A part of the title (ASCII letters in any case), or the beginning of the id. */
  title?: string;
}

/** {@link SessionFilterOptions}, checked, as query parameters (`null` where a filter is absent). */
export interface SessionFilterArguments {
  models: string[] | null;
  startedAfter: number | null;
  startedBefore: number | null;
  /** A LIKE pattern (escaped with `\`) for the title, and one for an id prefix; `null`: no filter. */
  titlePattern: string | null;
  idPattern: string | null;
}

/** Checks the filters of {@link SessionFilterOptions} (`INVALID_ARGUMENT`); empty ones mean none. */
export function sessionFilterArguments(opts: SessionFilterOptions): SessionFilterArguments {
  const models = optionalStringArray("models", opts.models);
  const title = optionalString("title", opts.title);
  return {
    models: models === null || models.length === 0 ? null : models,
    startedAfter: optionalNumber("startedAfter", opts.startedAfter),
    startedBefore: optionalNumber("startedBefore", opts.startedBefore),
    titlePattern: title ? `%${escapeLike(title.toLowerCase())}%` : null,
    idPattern: title ? `${escapeLike(title)}%` : null,
  };
}

/** Whether any filter of {@link SessionFilterArguments} is set. */
export function hasSessionFilter(a: SessionFilterArguments): boolean {
  return a.models !== null || a.startedAfter !== null || a.startedBefore !== null || a.titlePattern !== null;
}
