import { dirname, join } from "node:path";

/** The backup folder of `backup`, `backup list`: `--to`, else `backups/` beside the database. */
export function backupFolder(o: { to?: string }, dbPath: string): string {
  return o.to ?? join(dirname(dbPath), "backups");
}
