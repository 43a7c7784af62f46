// The checkpoint thread of a store (checkpoint-thread.ts): its own connection to the store's
// file, on which it runs the `PRAGMA wal_checkpoint(mode)` it is asked for, one at a time, so
// that copying the WAL back into the file, its fsync and the busy handler's waits for readers
// never block the caller's thread. It never writes a transaction.
import { parentPort, workerData } from "node:worker_threads";
import { DatabaseConnection } from "../database-connection.js";
import { sqliteCode } from "../sqlite-errors.js";
import type { CheckpointReply, CheckpointRequest, CheckpointWorkerData } from "./checkpoint-thread.js";

const port = parentPort;
if (port === null) throw new Error("checkpoint-worker runs in a worker thread");
const data = workerData as CheckpointWorkerData;

let conn: DatabaseConnection | undefined;
let openError: { code: string | undefined; message: string } | undefined;
try {
  conn = new DatabaseConnection(data.path, data.pragmas);
} catch (error) {
  openError = { code: sqliteCode(error), message: (error as Error).message };
}

// No close message: the store ends this thread with terminate(), and the connection closes with it.
port.on("message", (m: CheckpointRequest) => {
  let reply: CheckpointReply;
  if (conn === undefined) reply = { id: m.id, ok: false, ...(openError ?? { code: undefined, message: "" }) };
  else {
    try {
      const row = conn.db.pragma(`wal_checkpoint(${m.mode})`, { simple: false }) as Array<{ busy?: number }>;
      reply = { id: m.id, ok: true, done: row[0]?.busy === 0 };
    } catch (error) {
      reply = { id: m.id, ok: false, code: sqliteCode(error), message: (error as Error).message };
    }
  }
  port.postMessage(reply);
});
