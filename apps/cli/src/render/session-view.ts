import type { MessageRow, SessionRow } from "@hermes/store";

/** A session with its messages, as `show` and `export` render it. */
export type SessionWithMessages = SessionRow & { messages: MessageRow[] };
