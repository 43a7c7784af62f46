import type { ConnectionPragmas } from "../database-connection.js";
import type { SerializedError } from "../read-pool/read-methods.js";
import type { CjkIndexMode } from "../side-index/cjk-side-index.js";
import type { WritePathSettings } from "./write-path.js";
import type { WriteStats } from "./write-stats.js";

/** What the writer thread is given: the store's write settings, all plain data. */
export interface WriterWorkerData {
  readonly settings: WritePathSettings;
  /** The short-CJK index's build mode and the settings of its builder's thread. */
  readonly cjk: { readonly mode: CjkIndexMode; readonly pragmas: ConnectionPragmas };
  /** Where the caller's `clock` answers (see `caller-clock.ts`); absent: the writer's own wall clock. */
  readonly clock?: SharedArrayBuffer;
  /** A damaged file the caller's side has already seen: the writer refuses every write from the start. */
  readonly corruption?: SerializedError;
}

/** One write asked of the writer thread. */
export interface WriterCall {
  readonly id: number;
  readonly method: string;
  readonly args: unknown[];
  /** `rebuildSearchIndex`: post each progress report back (the caller's `onProgress`). */
  readonly progress?: boolean;
}

/**
 * From the caller to the writer thread: the calls made in one tick of the caller (started
 * together, so they group as they would have on the caller's thread), a damaged file seen by a
 * read, the short-CJK build the caller's side was running when it handed the writes over (the
 * writer goes on with it), or the end.
 */
export type WriterRequest =
  | { readonly type: "calls"; readonly calls: WriterCall[] }
  | { readonly type: "corrupt"; readonly error: SerializedError }
  | { readonly type: "buildCjk" }
  | { readonly type: "close" };

/** Whether the writer's short-CJK builder runs, and how its last build failed. */
export interface CjkBuilderState {
  readonly active: boolean;
  readonly lastError: string | null;
}

/** The answer to one call: its value, or its error as data. */
export type WriterAnswer =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: SerializedError };

/**
 * From the writer thread to the caller. Answers come in batches (those of one group commit
 * together), each with the writer's write counters, so the caller's `stats()` stays synchronous
 * and is current once a write has resolved.
 */
export type WriterReply =
  | { readonly type: "ready"; readonly stats: WriteStats; readonly cjk: CjkBuilderState }
  | { readonly type: "failed"; readonly error: SerializedError }
  | { readonly type: "replies"; readonly answers: WriterAnswer[]; readonly stats: WriteStats }
  | { readonly type: "progress"; readonly id: number; readonly progress: unknown }
  | { readonly type: "cjk"; readonly cjk: CjkBuilderState }
  | { readonly type: "clock" }
  | { readonly type: "closed"; readonly stats: WriteStats };
