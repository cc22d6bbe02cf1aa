import { Redis } from "ioredis";
import { reconnectDelayMs } from "./reconnect-delay.js";
import type { RedisClient } from "./redis-connection.js";

/**
 * Keeps an ioredis connection alive for good: ioredis ends a client ("end": it never reconnects
 * again) when its connector fails, e.g. when a Sentinel's +switch-master disconnects it while it is
 * still asking a Sentinel for the master (docs/operations.md). Each "end" not caused by `stop()`
 * schedules a new connect(), with backoff, until the client is ready again. Cluster clients are left
 * to ioredis (they rebuild their node connections themselves). Returns `stop`.
 */
export function reviveOnEnd(...clients: RedisClient[]): () => void {
  const stops = clients.filter((c) => c instanceof Redis).map((c) => revive(c));
  return () => {
    for (const stop of stops) stop();
  };
}

function revive(client: Redis): () => void {
  let stopped = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped || timer) return;
    const delayMs = reconnectDelayMs(attempt++);
    timer = setTimeout(() => {
      timer = undefined;
      // Someone else (a command, the caller) may have reconnected meanwhile.
      if (stopped || client.status !== "end") return;
      // A failed connect() ends the client again, and that "end" schedules the next try.
      client.connect().catch(() => {});
    }, delayMs);
  };
  const onReady = () => {
    attempt = 0;
  };
  client.on("end", schedule);
  client.on("ready", onReady);
  if (client.status === "end") schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
    client.off("end", schedule);
    client.off("ready", onReady);
  };
}
