// Opens the store on a shared schema (argv: connection string, schema), waits for a start
// signal file so every child opens at the same moment, prints its migration report.
import { existsSync } from "node:fs";
import { openPostgresSessionStore } from "@hermes/postgres";

const [url, schema, go] = process.argv.slice(2);
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 5));
const store = await openPostgresSessionStore({ connectionString: url, schema, maxConnections: 2 });
await store.createSession({ id: `p${process.pid}`, source: "child" });
process.stdout.write(JSON.stringify(store.migration));
await store.close();
