import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";

// Editors and deploy tools replace files in several steps (write, rename, chmod): one reload per burst.
const QUIET_MS = 100;

/**
 * Calls `onChange` after the file at `path` changed (written, replaced by rename, recreated). It
 * watches the file's directory rather than the file, so an atomic replace (a new inode) is seen too.
 */
export class WatchedFile {
  private readonly watcher: FSWatcher;
  private timer?: NodeJS.Timeout;

  constructor(path: string, onChange: () => void) {
    const file = basename(resolve(path));
    this.watcher = watch(dirname(resolve(path)), { persistent: false }, (_event, name) => {
      // Some platforms report no file name, and Kubernetes swaps a "..data" symlink instead of the
      // file: reloading an unchanged file is harmless, so those count as changes too.
      if (name !== null && name !== file && !name.startsWith(`..`)) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(onChange, QUIET_MS);
    });
    this.watcher.on("error", () => {});
  }

  /** Stops watching. */
  close(): void {
    clearTimeout(this.timer);
    this.watcher.close();
  }
}
