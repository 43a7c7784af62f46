/**
 * A one-line progress bar on stderr while a long step runs. On a terminal it redraws in place
 * (at most ten times a second); otherwise (CI, files) it prints one line at the start and one at
 * the end, so logs stay readable.
 */
export class ProgressBar {
  readonly #label: string;
  readonly #total: number;
  readonly #tty: boolean;
  readonly #started = performance.now();
  #lastDraw = 0;

  constructor(label: string, total: number, stream: NodeJS.WriteStream = process.stderr) {
    this.#label = label;
    this.#total = Math.max(1, total);
    this.#tty = stream.isTTY === true;
    if (!this.#tty) process.stderr.write(`${label}: ${total.toLocaleString("en-US")} …\n`);
  }

  update(done: number): void {
    if (!this.#tty) return;
    const now = performance.now();
    if (now - this.#lastDraw < 100 && done < this.#total) return;
    this.#lastDraw = now;
    const width = 30;
    const ratio = Math.min(1, done / this.#total);
    const filled = Math.round(ratio * width);
    const elapsed = (now - this.#started) / 1000;
    const eta = ratio > 0 ? elapsed / ratio - elapsed : 0;
    process.stderr.write(
      `\r${this.#label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ` +
        `${done.toLocaleString("en-US")}/${this.#total.toLocaleString("en-US")} ${elapsed.toFixed(0)}s eta ${eta.toFixed(0)}s   `,
    );
  }

  finish(): void {
    const seconds = ((performance.now() - this.#started) / 1000).toFixed(1);
    if (this.#tty) {
      this.update(this.#total);
      process.stderr.write(`\n`);
    } else {
      process.stderr.write(`${this.#label}: done in ${seconds}s\n`);
    }
  }
}
