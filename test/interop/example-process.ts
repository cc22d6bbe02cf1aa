import { type ChildProcess, spawn } from "node:child_process";

/** One example client process (Go or Java) run by the interop test. */
export interface ExampleProcess {
  label: string;
  child: ChildProcess;
  /** Resolves when the process exits, with its exit code and everything it printed. */
  exited: Promise<{ code: number | null; output: string }>;
  /** SIGKILLs the process if it is still running and waits for it to exit. */
  kill(): Promise<void>;
}

/** Spawns `command args` with stdout and stderr collected; `label` names it in failures. */
export function spawnExample(label: string, command: string, args: string[]): ExampleProcess {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const exited = new Promise<{ code: number | null; output: string }>((resolve) => {
    child.once("error", (error) => resolve({ code: null, output: `${output}\nspawn failed: ${error.message}` }));
    child.once("close", (code) => resolve({ code, output }));
  });
  return {
    label,
    child,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * Rejects as soon as any of `processes` exits (with its output), for racing against a condition
 * that needs them all running; `dispose()` removes the listeners once the race is over.
 */
export function rejectOnExit(processes: ExampleProcess[]): { promise: Promise<never>; dispose(): void } {
  let dispose = () => {};
  const promise = new Promise<never>((_, reject) => {
    const listeners = processes.map((p) => {
      const onExit = () => {
        p.exited.then(({ code, output }) => reject(new Error(`${p.label} exited early (${code}):\n${output}`)));
      };
      p.child.once("exit", onExit);
      return () => p.child.off("exit", onExit);
    });
    dispose = () => {
      for (const remove of listeners) remove();
    };
  });
  promise.catch(() => {});
  return { promise, dispose };
}
