package turnstile.example;

import java.util.List;
import turnstile.v1.LockServiceGrpc.LockServiceStub;

/** The coordinators a session may use, taken in turn: the first open and every resume try the next. */
final class Coordinators {
  private final List<LockServiceStub> stubs;
  private int next;

  Coordinators(List<LockServiceStub> stubs) {
    if (stubs.isEmpty()) throw new IllegalArgumentException("no coordinator address given");
    this.stubs = List.copyOf(stubs);
  }

  int size() {
    return stubs.size();
  }

  synchronized LockServiceStub next() {
    return stubs.get(next++ % stubs.size());
  }
}
