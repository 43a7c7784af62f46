import { join } from "node:path";
import { describeSessionStoreConformance } from "@hermes/conformance";
import { openSessionStore } from "@hermes/store";
import { tempDir } from "./helpers/temp-dir.js";

// The SessionStore contract (@hermes/conformance), run against the SQLite backend: each store
// a new file in a temp directory.
describeSessionStoreConformance({
  name: "sqlite",
  open: (options) => openSessionStore({ path: join(tempDir(), "state.db"), ...options }),
});
