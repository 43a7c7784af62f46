import { InvalidArgumentError } from "../errors/hermes-store-error.js";
import type { MessageRow } from "../types.js";
import { nonNegativeInt, optionsObject, requireId } from "../validation/arguments.js";

/** Options of `getMessagePage`: at most one of `afterId`, `beforeId`, `aroundId`. */
export interface MessagePageOptions {
  /** The messages right after this message of the session. */
  afterId?: number;
  /** The messages right before this message of the session. */
  beforeId?: number;
  /** A page holding this message, with about a quarter of the page before it. */
  aroundId?: number;
  /** Without a message id: the first page (`start`, default) or the last one (`end`). */
  from?: "start" | "end";
  /** Messages per page: 1–1,000, default 100. */
  limit?: number;
}

/** One page of a session's messages in conversation order (`timestamp`, then `id`). */
export interface MessagePage {
  /** The rows of `getMessages` (`tool_calls` parsed). */
  messages: MessageRow[];
  /** Messages of the session before the first one of this page. */
  before: number;
  /** Messages of the session after the last one of this page. */
  after: number;
}

/** Where a page starts, as validated by {@link messagePageArguments}. */
export type MessagePageAnchor =
  | { kind: "start" | "end" }
  | { kind: "after" | "before" | "around"; messageId: number };

/** The validated arguments of `getMessagePage` (`INVALID_ARGUMENT`), for every backend. */
export interface MessagePageArguments {
  id: string;
  limit: number;
  anchor: MessagePageAnchor;
}

const MAX_PAGE = 1000;

/** Checks the arguments of `getMessagePage` (`INVALID_ARGUMENT`), for every backend. */
export function messagePageArguments(
  sessionId: unknown,
  o: MessagePageOptions | undefined,
): MessagePageArguments {
  const id = requireId("sessionId", sessionId);
  const opts = optionsObject("options", o);
  const limit = nonNegativeInt("limit", opts.limit, 100, MAX_PAGE);
  if (limit === 0) throw new InvalidArgumentError("limit", "limit must be at least 1");
  const given = (["afterId", "beforeId", "aroundId"] as const).filter((k) => opts[k] !== undefined);
  if (given.length > 1) {
    throw new InvalidArgumentError(given[1]!, `give at most one of afterId, beforeId and aroundId`);
  }
  const key = given[0];
  if (key !== undefined) {
    const messageId = opts[key];
    if (typeof messageId !== "number" || !Number.isSafeInteger(messageId)) {
      throw new InvalidArgumentError(key, `${key} must be an integer message id`);
    }
    if (opts.from !== undefined) throw new InvalidArgumentError("from", `from does not go with ${key}`);
    const kind = key === "afterId" ? "after" : key === "beforeId" ? "before" : "around";
    return { id, limit, anchor: { kind, messageId } };
  }
  const from = opts.from ?? "start";
  if (from !== "start" && from !== "end")
    throw new InvalidArgumentError("from", "from must be 'start' or 'end'");
  return { id, limit, anchor: { kind: from } };
}

/** Messages a page around a message shows before it (the rest is the message and what follows). */
export function pageAround(limit: number): number {
  return Math.floor(limit / 4);
}
