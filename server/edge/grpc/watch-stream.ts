import { type ServerWritableStream, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { WatchRequest, WatchResponse } from "../../../gen/ts/turnstile/v1/turnstile.js";
import type { Limits } from "../../config/limits.js";
import type { Watcher, WatchHub, WatchSink } from "../../engine/locks/watch-hub.js";
import { ServerError, toServerError } from "../../engine/server-error.js";
import type { LockEvent, LockState } from "../../store/store.js";
import { grpcStatusOf } from "../replies/failure-codes.js";
import { LockStateReplies as reply } from "../replies/lock-state-replies.js";
import type { RequestValidator } from "../request-validator.js";

/** What every Watch stream of one coordinator shares. */
export interface WatchDeps {
  watches: WatchHub;
  validator: RequestValidator;
  limits: Limits;
  log: Logger;
}

type Call = ServerWritableStream<WatchRequest, WatchResponse>;

/**
 * Serves one Watch stream: validates the name, registers with the hub and writes what it sends.
 * When the client reads too slowly (more than `maxWatchBacklog` messages queued) the hub stops
 * sending; once the stream drains, the watcher gets a fresh snapshot instead of what it missed.
 */
export class WatchStream implements WatchSink {
  private watcher?: Watcher;
  private ended = false;
  private awaitingDrain = false;

  constructor(
    private readonly call: Call,
    private readonly deps: WatchDeps,
  ) {
    for (const event of ["cancelled", "error", "close", "finish"]) call.on(event, () => this.finish());
    try {
      const name = deps.validator.name("watch.name", call.request.name);
      if (deps.watches.size >= deps.limits.maxWatches) {
        throw new ServerError("resource-exhausted", `coordinator: at most ${deps.limits.maxWatches} watches`);
      }
      this.watcher = deps.watches.add(name, this);
    } catch (err) {
      const e = toServerError(err, "watch", deps.log);
      this.end(grpcStatusOf(e), e.message);
    }
  }

  get lagging(): boolean {
    return this.call.writableLength >= this.deps.limits.maxWatchBacklog;
  }

  snapshot(state: LockState, resync: boolean): void {
    this.write(reply.snapshot(state, resync));
  }

  event(event: LockEvent): void {
    this.write(reply.event(event));
  }

  fail(why: "unavailable" | "draining"): void {
    if (why === "draining") this.end(status.UNAVAILABLE, "coordinator draining: watch on another coordinator");
    else this.end(status.UNAVAILABLE, "store unavailable: watch again later");
  }

  private write(response: WatchResponse): void {
    if (this.ended) return;
    this.call.write(response);
    if (!this.lagging || this.awaitingDrain) return;
    // 'drain' comes once the client has read what was queued (gRPC flow control holds the rest back).
    this.awaitingDrain = true;
    this.call.once("drain", () => {
      this.awaitingDrain = false;
      if (this.watcher) this.deps.watches.caughtUp(this.watcher);
    });
  }

  private end(code: status, details: string): void {
    if (this.ended) return;
    this.finish();
    this.call.emit("error", { code, details });
  }

  private finish(): void {
    this.ended = true;
    if (this.watcher) this.deps.watches.remove(this.watcher);
  }
}
