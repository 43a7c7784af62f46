import { TITLE_INDEX_NAME, TITLE_INDEX_SQL } from "../core-ddl.js";
import { objectExists } from "./introspect.js";
import type { EnsureStep } from "./migration.js";

/**
 * The unique partial index on `sessions.title`. A file that already holds duplicate titles
 * cannot get it: the reference then fails to open; we open it, leave the rows as they are and
 * report the duplicates as a warning (the index is retried on the next open).
 */
export const titleIndexStep: EnsureStep = {
  name: "title-unique-index",
  isSatisfied(db) {
    return objectExists(db, "index", TITLE_INDEX_NAME);
  },
  up({ db, warn }) {
    try {
      db.exec(TITLE_INDEX_SQL);
    } catch (error) {
      const dupes = db.all<{ title: string; n: number }>(
        "SELECT title, COUNT(*) AS n FROM sessions WHERE title IS NOT NULL GROUP BY title HAVING n > 1 LIMIT 20",
      );
      const list = dupes.map((d) => `'${d.title}' (${d.n})`).join(", ");
      warn(
        `Unique title index not created: duplicate titles ${list || "found"}; ` +
          `rename them, then reopen (${(error as Error).message})`,
      );
    }
  },
};
