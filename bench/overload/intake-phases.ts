import { credentials, type ServiceError, status } from "@grpc/grpc-js";
import { LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { openRequest, tryOnceAcquire } from "./raw-requests.js";

/**
 * Opens `count` session streams that never send Open and waits until the coordinator has ended
 * every one; resolves with how each ended (by gRPC status name), the time until the last ended,
 * and the coordinator's RSS before and at its peak.
 */
export async function unopenedStreams(address: string, count: number, rss: () => number) {
  const client = new LockServiceClient(address, credentials.createInsecure());
  const before = rss();
  let peak = before;
  const started = performance.now();
  const endings: Record<string, number> = {};
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const stream = client.session();
          stream.on("error", (err: ServiceError) => {
            const name = `${status[err.code] ?? String(err.code)}${err.code === status.INTERNAL ? `: ${err.details}` : ""}`;
            endings[name] = (endings[name] ?? 0) + 1;
            peak = Math.max(peak, rss());
            resolve();
          });
          stream.on("data", () => {});
        }),
    ),
  );
  client.close();
  return { endedBy: endings, lastEndedAfterMs: Math.round(performance.now() - started), rssMiB: { before, peak } };
}

/**
 * SIGSTOPs redis-server, sends Open and then `mib` MiB of acquires on one stream for as long as
 * the transport takes them (at most 5 s), SIGCONTs Redis and waits for Opened. Resolves with how
 * much the client could hand to the transport, what the coordinator answered, and its RSS.
 */
export async function floodBehindStalledOpen(address: string, redisPid: number, mib: number, rss: () => number) {
  const client = new LockServiceClient(address, credentials.createInsecure());
  const before = rss();
  let peak = before;
  const stream = client.session();
  let opened = false;
  let endedWith: string | undefined;
  stream.on("data", (r) => {
    if (r.kind?.$case === "opened") opened = true;
  });
  stream.on("error", (err: ServiceError) => {
    endedWith = `${status[err.code]}: ${err.details}`;
  });
  process.kill(redisPid, "SIGSTOP");
  let written = 0;
  const deadline = performance.now() + 5000;
  try {
    stream.write(openRequest("behind-open"));
    const value = Buffer.alloc(1024);
    // Writes while the transport accepts them: a paused coordinator stops reading, so HTTP/2 flow
    // control fills the window and write() starts returning false.
    for (let i = 0; written < mib * 1024 * 1024 && performance.now() < deadline && !endedWith; i++) {
      const more = stream.write(tryOnceAcquire(`behind/${i}`, String(i), "o", value));
      written += 1100;
      if (!more) await Promise.race([new Promise((r) => stream.once("drain", r)), until(deadline)]);
      peak = Math.max(peak, rss());
    }
  } finally {
    process.kill(redisPid, "SIGCONT");
  }
  const answerBy = performance.now() + 15_000;
  while (!opened && !endedWith && performance.now() < answerBy) await until(performance.now() + 50);
  peak = Math.max(peak, rss());
  stream.cancel();
  client.close();
  return {
    handedToTransportMiB: Math.round(written / 1024 / 1024),
    opened,
    endedWith: endedWith ?? "still open",
    rssMiB: { before, peak },
  };
}

function until(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));
}
