import { join } from "node:path";
import { describeSessionStoreConformance } from "@hermes/conformance";
import { openSessionStore } from "@hermes/store";
import { tempDir } from "./helpers/temp-dir.js";

// The SessionStore contract again, with every write of the store on its writer thread
// (`writer: "thread"`): the same suite, unchanged, as a second backend would run it. A file of
// its own so that vitest can run it beside the inline run.
describeSessionStoreConformance({
  name: "sqlite (writer thread)",
  open: (options) => openSessionStore({ path: join(tempDir(), "state.db"), writer: "thread", ...options }),
  openReadOnly: (store) => openSessionStore({ path: store.path, readOnly: true }),
});
