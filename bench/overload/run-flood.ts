import { credentials } from "@grpc/grpc-js";
import { FailureReason, LockServiceClient, type SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { openRequest, tryOnceAcquire } from "./raw-requests.js";

const NO_VALUE = Buffer.alloc(0);

/**
 * Floods a coordinator: opens `sessions` raw session streams (15 s TTL, no keepalives), then writes
 * `acquires` try-once acquires of distinct names on each at once, as a flooding client would, and
 * counts the answers by kind until every acquire was answered (or its stream ended). Resolves with
 * the counts, the time taken and the coordinator's RSS before and at its peak.
 */
export async function runFlood(address: string, sessions: number, acquires: number, rss: () => number) {
  const before = rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 100);
  const client = new LockServiceClient(address, credentials.createInsecure(), {
    "grpc.max_send_message_length": 1 << 20,
  });
  const answers: Record<string, number> = {};
  const ended: Record<string, number> = {};
  let outstanding = sessions * acquires;
  let opened = 0;
  const started = performance.now();
  const done = new Promise<void>((resolve) => {
    const count = (kind: string, n = 1) => {
      answers[kind] = (answers[kind] ?? 0) + n;
      outstanding -= n;
      if (outstanding === 0) resolve();
    };
    for (let s = 0; s < sessions; s++) {
      const stream = client.session();
      let answered = 0;
      stream.on("data", (r: SessionResponse) => {
        const kind = r.kind;
        if (kind?.$case === "opened") {
          opened++;
          // One write of every acquire, as a flooding client would.
          for (let i = 0; i < acquires; i++)
            stream.write(tryOnceAcquire(`flood/${s}/${i}`, String(i), "flood", NO_VALUE));
        } else if (kind?.$case === "acquired") {
          answered++;
          count("acquired");
        } else if (kind?.$case === "failed") {
          answered++;
          count(FailureReason[kind.failed.reason] ?? String(kind.failed.reason));
        }
      });
      stream.on("error", (err: { code: number }) => {
        ended[err.code] = (ended[err.code] ?? 0) + 1;
        count("unanswered (stream ended)", acquires - answered);
      });
      stream.write(openRequest("flood"));
    }
  });
  await done;
  clearInterval(sampler);
  client.close();
  return { opened, answers, ended, ms: Math.round(performance.now() - started), rssMiB: { before, peak } };
}
