/**
 * What each write method of the store does, in words a user reads in a refusal ("Setting a
 * title is refused: …"): an error names the operation the user asked for, never the method
 * that carries it out. A method missing here is named as it is.
 */
const OPERATIONS: Readonly<Record<string, string>> = {
  createSession: "Creating a session",
  ensureSession: "Creating a session",
  endSession: "Ending a session",
  reopenSession: "Reopening a session",
  updateSystemPrompt: "Changing a system prompt",
  updateTokenCounts: "Recording token counts",
  setSessionTitle: "Setting a title",
  appendMessage: "Adding a message",
  appendMessages: "Adding messages",
  clearMessages: "Clearing a session's messages",
  deleteSession: "Deleting a session",
  pruneSessions: "Pruning sessions",
  pruneSessionIds: "Pruning sessions",
  setMeta: "Writing metadata",
  vacuum: "Compacting the file (VACUUM)",
  forkSession: "Forking a session",
  importSessions: "Importing sessions",
  importBatch: "Importing sessions",
  rebuildSearchIndex: "Rebuilding the search indexes",
  maybeAutoPruneAndVacuum: "Automatic pruning",
};

/** The user's words for write method `method` (`setSessionTitle` → `Setting a title`). */
export function writeOperationName(method: string): string {
  return OPERATIONS[method] ?? method;
}
