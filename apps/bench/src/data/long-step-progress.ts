import cliProgress from "cli-progress";

/**
 * A progress bar on stderr while a long step runs (`cli-progress`, with elapsed time and ETA).
 * On a terminal it redraws in place; otherwise (CI, files) it prints one line at the start and
 * one at the end, so logs stay readable.
 */
export class LongStepProgress {
  readonly #label: string;
  readonly #bar: cliProgress.SingleBar | null;
  readonly #started = performance.now();

  constructor(label: string, total: number, stream: NodeJS.WriteStream = process.stderr) {
    this.#label = label;
    if (stream.isTTY !== true) {
      this.#bar = null;
      stream.write(`${label}: ${total.toLocaleString("en-US")} …\n`);
      return;
    }
    this.#bar = new cliProgress.SingleBar({
      stream,
      format: `${label} [{bar}] {percentage}% {value}/{total} {duration}s eta {eta}s`,
      barCompleteChar: "#",
      barIncompleteChar: ".",
      barsize: 30,
      formatValue: (v, _o, type) =>
        type === "value" || type === "total" ? v.toLocaleString("en-US") : String(v),
    });
    this.#bar.start(Math.max(1, total), 0);
  }

  update(done: number): void {
    this.#bar?.update(done);
  }

  finish(): void {
    if (this.#bar !== null) {
      this.#bar.update(this.#bar.getTotal());
      this.#bar.stop();
    } else {
      const seconds = ((performance.now() - this.#started) / 1000).toFixed(1);
      process.stderr.write(`${this.#label}: done in ${seconds}s\n`);
    }
  }
}
