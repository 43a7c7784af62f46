import * as messages from "../operations/messages.js";
import * as retention from "../operations/retention.js";
import * as search from "../operations/search.js";
import * as sessions from "../operations/sessions.js";
import * as titles from "../operations/titles.js";
import * as portable from "../portable/store-methods.js";
import type { StoreContext } from "../store-context.js";

/**
 * The store's writes by name: the operations that change the file (plus the two reads that need
 * the writable connection: `verifySearchIndex`, whose FTS5 check is a command inside a write
 * transaction, and searches of short CJK terms, which first bring their index up to date). The
 * store runs them on its own thread (`writer: "inline"`) or posts their names and arguments to
 * its writer thread, which runs the same functions there; nothing else is accepted by name.
 *
 * What a thread cannot take stays with the caller (see `write-router.ts`): the transcript files
 * of deleted and pruned sessions, `rebuildSearchIndex`'s `onProgress` (its reports are posted
 * back), an iterable import source (its units come as `importBatch`).
 */
export const WRITE_OPERATIONS = {
  createSession: sessions.createSession,
  ensureSession: sessions.ensureSession,
  endSession: sessions.endSession,
  reopenSession: sessions.reopenSession,
  updateSystemPrompt: sessions.updateSystemPrompt,
  updateTokenCounts: sessions.updateTokenCounts,
  setSessionTitle: titles.setSessionTitle,
  appendMessage: messages.appendMessage,
  appendMessages: messages.appendMessages,
  clearMessages: messages.clearMessages,
  deleteSession: retention.deleteSessionRow,
  pruneSessionIds: retention.pruneSessionIds,
  setMeta: retention.setMeta,
  vacuum: retention.vacuum,
  forkSession: portable.forkSession,
  importSessions: portable.importSessions,
  importBatch: portable.writeImportBatch,
  rebuildSearchIndex: search.rebuildSearchIndex,
  verifySearchIndex: search.verifySearchIndex,
  searchWithCjkIndex: search.searchWithCjkIndex,
} as const;

/** The name of a write. */
export type WriteMethod = keyof typeof WRITE_OPERATIONS;

/** The arguments of a write after the store's context. */
export type WriteArgs<K extends WriteMethod> = (typeof WRITE_OPERATIONS)[K] extends (
  ctx: StoreContext,
  ...args: infer A
) => unknown
  ? A
  : never;

/** What a write resolves with. */
export type WriteResult<K extends WriteMethod> = Awaited<ReturnType<(typeof WRITE_OPERATIONS)[K]>>;

/** Whether `name` is a write of {@link WRITE_OPERATIONS} (the writer thread accepts nothing else). */
export function isWriteMethod(name: string): name is WriteMethod {
  return Object.hasOwn(WRITE_OPERATIONS, name);
}

/** Runs the write `name` on `ctx` (this thread). */
export function runWrite<K extends WriteMethod>(
  ctx: StoreContext,
  name: K,
  args: WriteArgs<K>,
): Promise<WriteResult<K>> {
  const fn = WRITE_OPERATIONS[name] as (ctx: StoreContext, ...args: unknown[]) => Promise<WriteResult<K>>;
  return fn(ctx, ...(args as unknown[]));
}
