// Bundles each of the store's thread entries (after `tsc`) into dist/threads/<entry>.bundle.js:
// kysely and the @hermes packages inlined, better-sqlite3 (a native addon) left to Node. A
// thread then starts from a few files instead of ~400 modules (src/threads/start-thread.ts).
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));
const entries = {
  "read-worker": "read-pool/read-worker.js",
  "writer-worker": "write/writer-worker.js",
  "cjk-build-worker": "side-index/cjk-build-worker.js",
  "backup-worker": "backup/backup-worker.js",
};

await build({
  entryPoints: Object.entries(entries).map(([name, file]) => ({
    in: `${dist}${file}`,
    out: `${name}.bundle`,
  })),
  outdir: `${dist}threads`,
  bundle: true,
  splitting: true,
  chunkNames: "chunk-[hash]",
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["better-sqlite3"],
  logLevel: "warning",
});
