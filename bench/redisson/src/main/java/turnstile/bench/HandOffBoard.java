package turnstile.bench;

/**
 * The hand-off workload's two rules across threads (as bench/workloads/hand-off-board.ts): a
 * contender re-enters only once another contender has taken the lock, and a holder releases only
 * once the previous holder has asked again, so every release hands the lock to a waiter.
 */
final class HandOffBoard {
  private int entries;
  private int holder = -1;
  private final int[] issuedAt;
  private boolean stopping;

  HandOffBoard(int contenders) {
    issuedAt = new int[contenders];
    java.util.Arrays.fill(issuedAt, -1);
  }

  synchronized void issued(int who) {
    issuedAt[who] = entries;
    notifyAll();
  }

  /** Returns {entry number, previous holder or -1}. */
  synchronized int[] enter(int who) {
    int previous = holder;
    holder = who;
    entries++;
    notifyAll();
    return new int[] {entries, previous};
  }

  synchronized void untilEnteredAfter(int entry) {
    while (!stopping && entries <= entry) waitQuietly();
  }

  synchronized void untilIssuedSince(int who, int entry) {
    while (!stopping && issuedAt[who] < entry) waitQuietly();
  }

  synchronized void stop() {
    stopping = true;
    notifyAll();
  }

  synchronized boolean stopping() {
    return stopping;
  }

  private void waitQuietly() {
    try {
      wait();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopping = true;
    }
  }
}
