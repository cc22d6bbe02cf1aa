/** What a deadline needs of a command: whether it has its answer, and how to fail it. */
export interface Deadlined {
  readonly isSettled: boolean;
  reject(err: Error): void;
}

/** One timeout's commands in the order they were started: their deadlines never decrease. */
interface Lane {
  commands: Deadlined[];
  deadlines: number[];
  /** Index of the first command still watched: those before it were answered or failed. */
  head: number;
  timer?: NodeJS.Timeout;
}

/** Let-go entries kept at the front of a lane before its arrays are compacted. */
const COMPACT_AT = 256;

/**
 * The command timeout of the lock scripts (the connection's `commandTimeout`, 2 s by default), kept with
 * one timer per timeout length instead of one timer per command, as ioredis's own Command.setTimeout
 * does: a script is answered in well under a millisecond, so nearly every per-command timer was made only
 * to be cleared (test/server/message-path-cost.test.ts counts them). Commands of one length are started
 * in order, so their deadlines are too: the timer waits for the first command's; when it fires, the
 * answered commands at the front are let go of, those past their deadline are failed with ioredis's error
 * ("Command timed out"), and the timer waits for the next one's. Each new command also lets go of the
 * answered ones at the front, so answered commands are not kept until the timer fires. The timer is
 * unref'd: a command in flight has its connection's socket, which keeps the process alive.
 */
export class CommandDeadlines {
  private readonly lanes = new Map<number, Lane>();

  /** Fails `command` with "Command timed out" unless it has settled `ms` from now. */
  add(command: Deadlined, ms: number): void {
    let lane = this.lanes.get(ms);
    if (!lane) {
      lane = { commands: [], deadlines: [], head: 0 };
      this.lanes.set(ms, lane);
    }
    // Let go of the answered commands at the front (replies come in order), so that an answered command
    // and its reply are not kept until the timer fires.
    const { commands } = lane;
    while (lane.head < commands.length && commands[lane.head].isSettled) lane.head++;
    if (lane.head >= COMPACT_AT) CommandDeadlines.compact(lane);
    commands.push(command);
    lane.deadlines.push(performance.now() + ms);
    if (!lane.timer) this.wait(lane, ms);
  }

  /** Commands of timeout `ms` still watched (not yet found answered, nor failed), for tests. */
  watched(ms: number): number {
    const lane = this.lanes.get(ms);
    return lane ? lane.commands.length - lane.head : 0;
  }

  private wait(lane: Lane, ms: number): void {
    lane.timer = setTimeout(() => this.expire(lane), ms);
    lane.timer.unref();
  }

  private expire(lane: Lane): void {
    lane.timer = undefined;
    const now = performance.now();
    const { commands, deadlines } = lane;
    while (lane.head < commands.length && (commands[lane.head].isSettled || deadlines[lane.head] <= now)) {
      const command = commands[lane.head++];
      if (!command.isSettled) command.reject(new Error("Command timed out"));
    }
    CommandDeadlines.compact(lane);
    if (commands.length > 0) this.wait(lane, Math.max(0, deadlines[0] - now));
  }

  /** Drops the let-go entries from the front of `lane`'s arrays. */
  private static compact(lane: Lane): void {
    lane.commands.splice(0, lane.head);
    lane.deadlines.splice(0, lane.head);
    lane.head = 0;
  }
}
