import cliProgress from "cli-progress";

/** A progress display for long work; silent unless its stream is a terminal. */
export interface Progress {
  /** Reports `done` of `total` units, with an optional note (the step, the index). */
  update(done: number, total: number, detail?: string): void;
  /** Clears the bar. */
  finish(): void;
}

const SILENT: Progress = { update() {}, finish() {} };

/**
 * A one-line `cli-progress` bar on stderr (piped stdout stays clean), `label [####----] 42%
 * 42/100 detail`, cleared when done. Nothing at all unless stderr is a terminal.
 */
export function createProgress(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (stream.isTTY !== true) return SILENT;
  const bar = new cliProgress.SingleBar({
    stream,
    format: `${label} [{bar}] {percentage}% {value}/{total}{detail}`,
    barCompleteChar: "#",
    barIncompleteChar: "-",
    barsize: 28,
    hideCursor: true,
    clearOnComplete: true,
    fps: 20,
  });
  let started = false;
  return {
    update(done, total, detail) {
      const payload = { detail: detail ? ` ${detail}` : "" };
      if (!started) {
        bar.start(total, done, payload);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(done, payload);
      }
    },
    finish() {
      if (started) bar.stop();
      started = false;
    },
  };
}

/**
 * Runs `work` with a progress bar labelled `label` (see {@link createProgress}), cleared when
 * the work ends, however it ends. `work` is given the callback that moves the bar.
 */
export async function withProgress<T>(
  label: string,
  work: (update: (p: { done: number; total: number; step: string }) => void) => Promise<T>,
): Promise<T> {
  const progress = createProgress(label);
  try {
    return await work((p) => progress.update(p.done, p.total, p.step));
  } finally {
    progress.finish();
  }
}
