/**
 * The progress line: on a terminal one line rewritten in place, otherwise one line per step and
 * a line every few seconds, so a piped run still shows it is alive.
 */
export class Progress {
  readonly #tty = process.stderr.isTTY === true;
  readonly #startedAt = performance.now();
  #step = 0;
  #label = "";
  #lastLineAt = 0;

  constructor(readonly totalSteps: number) {}

  /** Starts the next numbered step. */
  begin(label: string): void {
    this.#step++;
    this.#label = label;
    this.#lastLineAt = 0;
    this.update("starting");
  }

  /** Replaces the detail of the current step. */
  update(detail: string): void {
    const elapsed = ((performance.now() - this.#startedAt) / 1000).toFixed(0);
    const line = `[${this.#step}/${this.totalSteps} ${elapsed}s] ${this.#label}: ${detail}`;
    if (this.#tty) {
      process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns ?? 120) - 1)}`);
    } else if (performance.now() - this.#lastLineAt > 5000) {
      this.#lastLineAt = performance.now();
      process.stderr.write(`${line}\n`);
    }
  }

  /** Ends the current step with its result. */
  done(result: string): void {
    const elapsed = ((performance.now() - this.#startedAt) / 1000).toFixed(0);
    const line = `[${this.#step}/${this.totalSteps} ${elapsed}s] ${this.#label}: ${result}`;
    process.stderr.write(this.#tty ? `\r\x1b[K${line}\n` : `${line}\n`);
  }

  /** A standalone note (setup, skipped implementations). */
  note(text: string): void {
    process.stderr.write(this.#tty ? `\r\x1b[K${text}\n` : `${text}\n`);
  }
}
