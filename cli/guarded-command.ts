import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import { LockExit } from "./exit-codes.js";

/** How the guarded command ended: its exit code as a shell reports it, and whether it was stopped. */
export interface CommandEnd {
  code: number;
  /** Set when `stop` was called before the command ended. */
  stopped: boolean;
}

// SIGINT from a terminal reaches the command through the process group; these are forwarded.
const FORWARDED = ["SIGTERM", "SIGHUP"] as const;

/**
 * Runs a command with inherited stdio while a lock is held. SIGTERM and SIGHUP sent to this
 * process are passed on; SIGINT is left to the terminal's process group (this process ignores it
 * so it can still release the lock). `stop` sends SIGTERM, then SIGKILL after `graceMs`.
 */
export class GuardedCommand {
  private readonly child: ChildProcess;
  private readonly ended: Promise<CommandEnd>;
  private stopped = false;
  private killTimer?: NodeJS.Timeout;

  constructor(argv: string[], env: NodeJS.ProcessEnv) {
    const forward = (signal: NodeJS.Signals) => this.child.kill(signal);
    const ignore = () => {};
    for (const s of FORWARDED) process.on(s, forward);
    process.on("SIGINT", ignore);
    this.child = spawn(argv[0], argv.slice(1), { stdio: "inherit", env });
    this.ended = new Promise<CommandEnd>((resolve) => {
      const finish = (code: number) => {
        clearTimeout(this.killTimer);
        for (const s of FORWARDED) process.off(s, forward);
        process.off("SIGINT", ignore);
        resolve({ code, stopped: this.stopped });
      };
      this.child.once("error", (err: NodeJS.ErrnoException) => {
        process.stderr.write(`turnstile lock: cannot run ${argv[0]}: ${err.message}\n`);
        finish(err.code === "ENOENT" ? LockExit.notFound : LockExit.cannotExecute);
      });
      this.child.once("exit", (code, signal) => finish(code ?? 128 + (signal ? constants.signals[signal] : 0)));
    });
  }

  /** Resolves once the command has ended. */
  wait(): Promise<CommandEnd> {
    return this.ended;
  }

  /** Sends `signal` to the command (a forwarded release request). */
  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /**
   * Sends SIGTERM now and SIGKILL after `graceMs` unless the command ended by then; `graceMs` must
   * not exceed the longest timer (lock-args.ts bounds --grace), or the SIGKILL would come at once.
   */
  stop(graceMs: number): void {
    if (this.stopped) return;
    this.stopped = true;
    this.child.kill("SIGTERM");
    this.killTimer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
  }
}
