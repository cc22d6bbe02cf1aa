import { createHook } from "node:async_hooks";

// Loaded by .mocharc.cjs (`require`). Mocha runs without `exit: true`, so the process ends only once
// every socket, server, child process and timer the tests opened is closed. If one is still open
// WAIT_MS after the last suite, this names what is left and fails the run (exit 1), rather than let
// CI hang or force an exit that hides the leak. With TURNSTILE_TRACE_HANDLES=1 it also prints where
// each leftover handle was created (as why-is-node-running does; slower, for diagnosis only).

/** How long after the last suite a handle may stay open; TURNSTILE_EXIT_WATCHDOG_MS overrides (for its own test). */
const WAIT_MS = Number(process.env.TURNSTILE_EXIT_WATCHDOG_MS ?? 10_000);

/** Creation stacks of live async resources, by id; filled only with TURNSTILE_TRACE_HANDLES=1. */
const created = new Map<number, { type: string; stack: string; resource: WeakRef<object> }>();
const IGNORED_TYPES = new Set(["PROMISE", "TickObject", "Microtask", "FSREQCALLBACK", "FSREQPROMISE", "WRITEWRAP"]);

if (process.env.TURNSTILE_TRACE_HANDLES === "1") {
  createHook({
    init(id, type, _trigger, resource) {
      if (IGNORED_TYPES.has(type)) return;
      const frames = (new Error().stack ?? "").split("\n").slice(1);
      const stack = frames.filter((frame) => !frame.includes("node:internal") && !frame.includes("exit-watchdog"));
      created.set(id, { type, stack: stack.slice(0, 10).join("\n"), resource: new WeakRef(resource as object) });
    },
    destroy(id) {
      created.delete(id);
    },
  }).enable();
}

/** One line per active handle: what it is and, where node says, what it is connected to. */
function describeHandles(): string[] {
  const handles = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles();
  const stdio: object[] = [process.stdin, process.stdout, process.stderr];
  return handles
    .filter((handle) => !stdio.includes(handle))
    .map((handle) => {
      const h = handle as Record<string, unknown> & { address?: () => unknown };
      const kind = handle.constructor?.name ?? typeof handle;
      if (kind === "Socket" && (h.remotePort || h.localPort))
        return `Socket ${h.localAddress}:${h.localPort} -> ${h.remoteAddress}:${h.remotePort}`;
      if (kind === "ChildProcess")
        return `ChildProcess pid ${h.pid}: ${(h.spawnargs as string[] | undefined)?.join(" ")}`;
      if (kind === "Server" && typeof h.address === "function") return `Server ${JSON.stringify(h.address())}`;
      return kind;
    });
}

/** Where each still-referenced resource was created (empty unless TURNSTILE_TRACE_HANDLES=1). */
function creationStacks(): string[] {
  return [...created.values()].flatMap(({ type, stack, resource }) => {
    const live = resource.deref() as { hasRef?: () => boolean } | undefined;
    return live && live.hasRef?.() !== false ? [`${type} created\n${stack}`] : [];
  });
}

export function mochaGlobalTeardown(): void {
  setTimeout(() => {
    const resources = process.getActiveResourcesInfo().filter((r) => r !== "TTYWrap" && r !== "PipeWrap");
    const lines = [...describeHandles(), ...creationStacks()].map((line) => `  ${line}\n`).join("");
    console.error(
      `\nThe tests left handles open ${WAIT_MS / 1000} s after the last suite, so node would not exit:\n` +
        `  active resources: ${resources.join(", ")}\n${lines}` +
        "Close each in the after() hook of the suite that opened it (a client's close(), a server's stop(), " +
        "a child's kill, clearTimeout in finally). TURNSTILE_TRACE_HANDLES=1 prints where each was created.",
    );
    // Mocha's own exit listener sets the exit code to its failure count: this one runs after it.
    process.on("exit", () => {
      process.exitCode = 1;
    });
    process.exit(1);
  }, WAIT_MS).unref();
}
