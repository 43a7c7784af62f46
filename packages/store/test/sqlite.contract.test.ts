import { join } from "node:path";
import { describeSessionStoreConformance } from "@hermes/conformance";
import { openSessionStore } from "@hermes/store";
import { tempDir } from "./helpers/temp-dir.js";

// The SessionStore contract (@hermes/conformance), run against the SQLite backend: each store
// a new file in a temp directory; a read-only store opens the same file with `readOnly: true`.
// `sqlite-writer-thread.contract.test.ts` runs the same contract with the writes on a writer thread.
describeSessionStoreConformance({
  name: "sqlite",
  open: (options) => openSessionStore({ path: join(tempDir(), "state.db"), ...options }),
  openReadOnly: (store) => openSessionStore({ path: store.path, readOnly: true }),
});
