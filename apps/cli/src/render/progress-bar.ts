/** A progress display for long work; silent unless its stream is a terminal. */
export interface ProgressBar {
  /** Reports `done` of `total` units (total unknown: a running count). */
  update(done: number, total?: number, detail?: string): void;
  /** Clears the bar. */
  finish(): void;
}

const SILENT: ProgressBar = { update() {}, finish() {} };

/**
 * A one-line progress bar on `stream` (stderr by default, so piped stdout stays clean),
 * redrawn at most every 50 ms. On a non-terminal it prints nothing.
 */
export function createProgressBar(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
  enabled: boolean = stream.isTTY === true,
): ProgressBar {
  if (!enabled) return SILENT;
  let last = 0;
  let drawn = false;
  const width = 28;
  return {
    update(done, total, detail) {
      const now = Date.now();
      const complete = total !== undefined && done >= total;
      if (!complete && now - last < 50) return;
      last = now;
      let text: string;
      if (total !== undefined && total > 0) {
        const ratio = Math.min(1, done / total);
        const filled = Math.round(ratio * width);
        text = `${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.floor(ratio * 100)}% ${done}/${total}`;
      } else {
        text = `${label} ${done}`;
      }
      if (detail) text += ` ${detail}`;
      stream.write(`\r\x1b[2K${text}`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}
