import { statSync } from "node:fs";
import { Worker } from "node:worker_threads";

/** The store's threads, by the name of their entry module. */
export type ThreadEntry = "read-worker" | "writer-worker" | "cjk-build-worker" | "backup-worker";

/** Each entry's module in `dist/` (TypeScript's output), relative to this folder. */
const MODULES: Readonly<Record<ThreadEntry, string>> = {
  "read-worker": "../read-pool/read-worker.js",
  "writer-worker": "../write/writer-worker.js",
  "cjk-build-worker": "../side-index/cjk-build-worker.js",
  "backup-worker": "../backup/backup-worker.js",
};

const resolved = new Map<ThreadEntry, URL>();

/**
 * The file a thread starts from: the entry's bundle (`threads/<entry>.bundle.js`, written by
 * the package's build next to this module: one file with kysely and the @hermes packages inside,
 * which a new thread loads in a third of the time of ~400 separate modules), or the module itself
 * when there is no bundle or it is older than the module (a build by `tsc` alone).
 */
export function threadEntryUrl(entry: ThreadEntry): URL {
  let url = resolved.get(entry);
  if (url === undefined) {
    const module = new URL(MODULES[entry], import.meta.url);
    const bundle = new URL(`./${entry}.bundle.js`, import.meta.url);
    url = isFresh(bundle, module) ? bundle : module;
    resolved.set(entry, url);
  }
  return url;
}

function isFresh(bundle: URL, module: URL): boolean {
  const b = statSync(bundle, { throwIfNoEntry: false });
  const m = statSync(module, { throwIfNoEntry: false });
  return b !== undefined && (m === undefined || b.mtimeMs >= m.mtimeMs);
}

/**
 * Starts one of the store's threads with the process's Node options (module conditions,
 * loaders) where it can take them; options a worker refuses at once (V8 heap limits such as
 * `--max-old-space-size`) leave it with none.
 */
export function startThread(entry: ThreadEntry, data: unknown): Worker {
  const url = threadEntryUrl(entry);
  // trackUnmanagedFds (Node's default, stated): a thread that is terminated or crashes has the
  // descriptors it opened with `fs.openSync` (the writers' queue) closed by Node as it ends.
  const options = { workerData: data, trackUnmanagedFds: true };
  try {
    return new Worker(url, { ...options, execArgv: workerExecArgv(process.execArgv) });
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error;
    return new Worker(url, { ...options, execArgv: [] });
  }
}

/**
 * The process's Node options a worker can take: a program run with `node --input-type=module -e`
 * passes options that only apply to its own entry (a worker refuses to start with them).
 */
export function workerExecArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--input-type") i++;
    else if (!arg.startsWith("--input-type=")) out.push(arg);
  }
  return out;
}
