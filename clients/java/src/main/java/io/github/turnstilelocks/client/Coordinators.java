package io.github.turnstilelocks.client;

import io.grpc.ManagedChannel;
import java.util.List;
import turnstile.v1.LockServiceGrpc;
import turnstile.v1.LockServiceGrpc.LockServiceStub;

/** The coordinators a client may use, taken in turn: the first open, every resume and every watch try the next. */
final class Coordinators {
  private final List<ManagedChannel> channels;
  private int next;

  Coordinators(List<ManagedChannel> channels) {
    if (channels.isEmpty()) throw new IllegalArgumentException("addresses: give at least one coordinator host:port");
    this.channels = List.copyOf(channels);
  }

  int size() {
    return channels.size();
  }

  synchronized ManagedChannel nextChannel() {
    return channels.get(next++ % channels.size());
  }

  LockServiceStub next() {
    return LockServiceGrpc.newStub(nextChannel());
  }
}
