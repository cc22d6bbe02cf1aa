import { ServerError } from "../../engine/server-error.js";

/** Bounds on store work started by client requests (acquire, release, proclaim). */
export interface AdmissionLimits {
  /** Requests of all sessions with store work in flight, per coordinator. */
  maxStoreInFlight: number;
  /** Requests of one session with store work in flight. */
  maxSessionInFlight: number;
  /** Requests of one session waiting for a slot; beyond it a request is refused RESOURCE_EXHAUSTED. */
  maxSessionQueue: number;
}

/** How a lane asks its stream to stop and start reading (HTTP/2 flow control then holds the client back). */
export interface LaneFlow {
  pause(): void;
  resume(): void;
}

interface Queued {
  requestId: string;
  run: () => Promise<void>;
  /** An acquire (or acquire-all): what a cancel may take back. */
  withdrawable: boolean;
}

/**
 * One session's lane into the store: its requests run in arrival order, at most
 * `maxSessionInFlight` at once. While a quarter of its queue bound is waiting the stream is
 * paused, so a flood stays in the client's HTTP/2 window instead of this process's memory.
 */
export class AdmissionLane {
  readonly queue: Queued[] = [];
  inFlight = 0;
  private paused = false;
  private closed = false;

  constructor(
    private readonly admission: StoreAdmission,
    private readonly flow: LaneFlow,
  ) {}

  /**
   * Queues `run` behind this session's earlier requests; it starts once the session and the
   * coordinator have a free slot; `withdrawable` for an acquire, which a cancel may take back (withdraw).
   * Throws `resource-exhausted` (nothing was changed) when the session's queue is full.
   */
  submit(requestId: string, run: () => Promise<void>, withdrawable = false): void {
    if (this.closed) return;
    const { maxSessionQueue } = this.admission.limits;
    if (this.queue.length >= maxSessionQueue)
      throw new ServerError(
        "resource-exhausted",
        `session: more than ${maxSessionQueue} requests waiting for the store; nothing was changed, retry later`,
      );
    this.queue.push({ requestId, run, withdrawable });
    this.admission.ready(this);
    if (!this.paused && this.queue.length >= this.highWater) {
      this.paused = true;
      this.flow.pause();
    }
  }

  /**
   * Takes an acquire that has not started yet out of the queue; false when none is queued under that id.
   * A release, proclaim or other request queued under the id stays (a cancel withdraws acquires only).
   */
  withdraw(requestId: string): boolean {
    const i = this.queue.findIndex((q) => q.withdrawable && q.requestId === requestId);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    this.afterShift();
    return true;
  }

  /** Drops every request not started yet (the session ended: they never touched the store). */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.admission.forget(this);
  }

  /** Starts the next queued request; called by StoreAdmission when slots are free. */
  startNext(onDone: () => void): void {
    const next = this.queue.shift();
    if (!next) return;
    this.afterShift();
    this.inFlight++;
    // `run` never rejects (the session stream answers its failures); one reaction, not finally's two.
    const done = () => {
      this.inFlight--;
      onDone();
    };
    next.run().then(done, done);
  }

  private get highWater(): number {
    return Math.max(1, Math.floor(this.admission.limits.maxSessionQueue / 4));
  }

  private afterShift(): void {
    if (this.paused && this.queue.length <= this.highWater / 2) {
      this.paused = false;
      this.flow.resume();
    }
  }
}

/**
 * Admission control of one coordinator: client requests that touch the store wait in their
 * session's lane and start round-robin across sessions, at most `maxStoreInFlight` at once, so no
 * session's flood queues ahead of another session's requests, and the store's own queue stays
 * short enough that keepalive renewals (which bypass admission) are answered within their lease.
 */
export class StoreAdmission {
  private inFlight = 0;
  /** Lanes with queued requests, in round-robin order. */
  private readonly ready_ = new Set<AdmissionLane>();

  constructor(readonly limits: AdmissionLimits) {}

  /** A new lane for one session stream. */
  lane(flow: LaneFlow): AdmissionLane {
    return new AdmissionLane(this, flow);
  }

  /** Requests of all sessions with store work in flight now. */
  get running(): number {
    return this.inFlight;
  }

  /** Notes that `lane` has queued work, and starts what the bounds allow. */
  ready(lane: AdmissionLane): void {
    // Nobody else waits and both bounds have room: what the round would start first, started at once.
    if (this.ready_.size === 0 && this.hasRoom(lane)) {
      this.start(lane);
      return;
    }
    this.ready_.add(lane);
    this.pump();
  }

  /** Stops serving `lane` (closed). */
  forget(lane: AdmissionLane): void {
    this.ready_.delete(lane);
  }

  private pump(): void {
    let progressed = true;
    while (this.inFlight < this.limits.maxStoreInFlight && this.ready_.size > 0 && progressed) {
      progressed = false;
      for (const lane of [...this.ready_]) {
        if (this.inFlight >= this.limits.maxStoreInFlight) break;
        // Re-inserting moves the lane to the back: the next round starts with the next session.
        this.ready_.delete(lane);
        if (lane.queue.length === 0) continue;
        if (lane.inFlight >= this.limits.maxSessionInFlight) {
          this.ready_.add(lane);
          continue;
        }
        progressed = true;
        this.start(lane);
      }
    }
  }

  private hasRoom(lane: AdmissionLane): boolean {
    return this.inFlight < this.limits.maxStoreInFlight && lane.inFlight < this.limits.maxSessionInFlight;
  }

  /** Starts `lane`'s next request; the lane goes to the back of the round while it has more. */
  private start(lane: AdmissionLane): void {
    this.inFlight++;
    lane.startNext(() => {
      this.inFlight--;
      // Served last, so to the back of the round.
      this.ready_.delete(lane);
      if (lane.queue.length > 0) this.ready_.add(lane);
      this.pump();
    });
    if (lane.queue.length > 0) this.ready_.add(lane);
  }
}
