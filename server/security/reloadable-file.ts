import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { WatchedFile } from "./watched-file.js";

/** A file that cannot be read or parsed: the message names the file and what is wrong. */
export class SecurityFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecurityFileError";
  }
}

/**
 * One security file (tokens, policy) parsed into a `T`, re-read when the file changes or `reload()`
 * is called (SIGHUP). A version that fails to read or parse is logged and ignored: the last good
 * one stays in force, so a half-written file never opens or closes the door by accident.
 */
export class ReloadableFile<T> {
  private value: T;
  private readonly watcher: WatchedFile;

  /** Reads and parses the file now; throws a SecurityFileError when it cannot. */
  constructor(
    readonly path: string,
    private readonly parse: (text: string, path: string) => T,
    private readonly log: Logger,
    private readonly what: string,
  ) {
    this.value = this.read();
    this.watcher = new WatchedFile(path, () => this.reload());
  }

  /** The version in force. */
  get current(): T {
    return this.value;
  }

  /** Re-reads the file; true when the new version is now in force. */
  reload(): boolean {
    try {
      this.value = this.read();
      this.log.info({ file: this.path }, `${this.what} reloaded`);
      return true;
    } catch (err) {
      this.log.error(
        { file: this.path, err: (err as Error).message },
        `${this.what} not reloaded: keeping the last good one`,
      );
      return false;
    }
  }

  /** Stops watching the file. */
  close(): void {
    this.watcher.close();
  }

  private read(): T {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (err) {
      throw new SecurityFileError(`${this.what} ${this.path}: cannot read (${(err as NodeJS.ErrnoException).code})`);
    }
    return this.parse(text, this.path);
  }
}
