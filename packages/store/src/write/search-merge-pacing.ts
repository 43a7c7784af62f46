import type { DatabaseConnection } from "../database-connection.js";
import { isBusyError } from "../sqlite-errors.js";
import type { MergePacing } from "./merge-pacing.js";
import { type PausedMerging, pauseFtsAutomerge } from "./pause-fts-automerge.js";

/**
 * Pages of segment merging each paced transaction asks of each full-text table (FTS5's `merge`
 * command). FTS5 itself merges 64 × (number of levels) pages each time 64 leaf pages have been
 * written, in whichever transaction crosses that mark; asked for in every paced transaction, 16
 * kept the index about as compact, and no transaction did a large share (see
 * docs/design/contention.md, "Spreading the search index's merges").
 */
export const MERGE_PAGES_PER_TRANSACTION = 16;

/**
 * The `usermerge` of a paced transaction's merging: a level's segments are merged once it holds
 * this many (FTS5's default is 4). Merging at 4 in every transaction rewrote the index more
 * often than FTS5's own budgeted merging does (which falls behind and then merges more segments at
 * once); at 8 the index keeps about as many segments as with FTS5's merging, for less work.
 */
export const PACED_USERMERGE = 8;

/**
 * Merge pacing for the reference's two FTS5 tables (`messages_fts`, `messages_fts_trigram`).
 *
 * A transaction that writes several messages would otherwise, about once in a hundred, also do a
 * large share of FTS5's segment merging, many times the cost of the transaction itself.
 * Paced, it pauses FTS5's `automerge` while it writes (see {@link pauseFtsAutomerge}), raises
 * `usermerge` to {@link PACED_USERMERGE}, asks for {@link MERGE_PAGES_PER_TRANSACTION} pages of
 * merging before `COMMIT`, and puts both values back in the same transaction: other connections,
 * the reference among them, only ever see the settings FTS5 was using. Unlike a fork, it does not
 * remove the rows FTS5 leaves behind in a file that had none (they then hold FTS5's defaults, 4):
 * removing them re-prepares every statement, too dear for small group transactions. A table whose
 * `automerge` is 0 (merging turned off by its owner), or not an integer FTS5 accepts, is left
 * alone. If the index is damaged the transaction goes unpaced: the write itself meets the damage,
 * and the store's index repair deals with it. Measurements: docs/design/contention.md, "Spreading
 * the search index's merges".
 */
export function referenceSearchMergePacing(conn: DatabaseConnection): MergePacing {
  let paused: PausedMerging | undefined;
  return {
    hold: () => {
      paused = undefined;
      conn.statement("SAVEPOINT hermes_pacing").run();
      try {
        paused = pauseFtsAutomerge(conn, { rowsExactly: false, usermerge: PACED_USERMERGE });
        conn.statement("RELEASE hermes_pacing").run();
      } catch (error) {
        if (isBusyError(error) || !conn.inTransaction) throw error;
        // Undo a half-done pause (FTS5 rereads its setting: the cookie it bumped rolls back too).
        conn.statement("ROLLBACK TO hermes_pacing").run();
        conn.statement("RELEASE hermes_pacing").run();
        paused = undefined;
      }
    },
    release: () => {
      const held = paused;
      paused = undefined;
      if (held === undefined) return;
      for (const table of held.tables) {
        try {
          conn
            .statement(
              `INSERT INTO ${table}(${table}, rank) VALUES ('merge', ${MERGE_PAGES_PER_TRANSACTION})`,
            )
            .run();
        } catch (error) {
          // A failed merge is undone on its own and can wait for the next transaction.
          if (isBusyError(error) || !conn.inTransaction) throw error;
        }
      }
      // Throws if it cannot: the transaction must then not commit.
      held.resume();
    },
  };
}
