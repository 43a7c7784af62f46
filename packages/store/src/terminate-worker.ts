import type { Worker } from "node:worker_threads";

/**
 * `worker.terminate()`, with the process kept alive until the thread has ended. Node does not
 * count a terminating thread as keeping the event loop alive: when nothing else does (a script's
 * last `await store.close()`), the process exited while the thread was still finishing a native
 * call (a checkpoint's I/O), the promise never settled and the code after it never ran.
 */
export async function terminateWorker(worker: Worker): Promise<void> {
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    await worker.terminate();
  } finally {
    clearInterval(keepAlive);
  }
}
