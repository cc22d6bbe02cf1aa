/**
 * Stops this process when the shell `npx` started it in goes away. `npx turnstile …` runs the
 * command under `sh -c`; on SIGTERM or SIGINT npm passes the signal on to that shell only, and the
 * shell dies without passing it on, so this process would live on, orphaned. Under npx (npm sets
 * `npm_lifecycle_event=npx`) a check every `intervalMs` notices that our parent changed and sends us
 * SIGTERM, exactly as if the signal had been passed on.
 */
export function watchParentShell(intervalMs = 1000): void {
  if (process.env.npm_lifecycle_event !== "npx") return;
  const parent = process.ppid;
  // A process-liveness check, not lock state: Node has no event for "parent exited" (no prctl).
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, intervalMs);
  timer.unref();
}
