/**
 * Stops this process when the shell npm started it in goes away. `npx turnstile …` and npm scripts
 * (`npm run serve`) run the command under `sh -c`; npm passes SIGTERM and SIGINT on to that shell
 * only, and the shell dies without passing them on, so this process would live on, orphaned. When
 * npm started us (npm sets `npm_lifecycle_event`), a check every `intervalMs` notices that our
 * parent changed and sends us SIGTERM, exactly as if the signal had been passed on.
 */
export function watchParentShell(intervalMs = 1000): void {
  if (process.env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  // A process-liveness check, not lock state: Node has no event for "parent exited" (no prctl).
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, intervalMs);
  timer.unref();
}
