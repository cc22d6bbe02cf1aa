package io.github.turnstilelocks.client;

import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every thread a client runs, all named {@value #PREFIX}...: its own Netty event loop and gRPC
 * executor (instead of grpc-java's process-wide shared pools, which outlive a client), a timer
 * thread and a callback pool. {@link #close()} shuts the channels down and then every pool, and
 * waits until their threads have ended.
 */
final class ClientThreads implements AutoCloseable {
  /** The name prefix of every thread of a client. */
  static final String PREFIX = "turnstile-";

  final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, named("timer"));
  final ExecutorService callbacks = cachedPool("callback");
  private final ExecutorService grpc = cachedPool("grpc");
  private final EventLoopGroup eventLoop = new NioEventLoopGroup(1, new DefaultThreadFactory(PREFIX + "netty", true));
  private final List<ManagedChannel> channels = new ArrayList<>();

  ClientThreads() {
    timers.setRemoveOnCancelPolicy(true);
  }

  /**
   * A channel to {@code address} on this client's threads, with HTTP/2 keepalive pings every 10 s
   * (grpc-java's minimum; the coordinator permits one every 4 s) and a 2.5 s timeout, as the
   * TypeScript client, so a coordinator that died silently is noticed.
   */
  ManagedChannel channel(String address, ChannelCredentials credentials) {
    ManagedChannel channel = NettyChannelBuilder.forTarget(address, credentials)
        .eventLoopGroup(eventLoop).channelType(NioSocketChannel.class)
        .executor(grpc).offloadExecutor(grpc)
        .keepAliveTime(10, TimeUnit.SECONDS).keepAliveTimeout(2500, TimeUnit.MILLISECONDS).keepAliveWithoutCalls(true)
        .build();
    channels.add(channel);
    return channel;
  }

  @Override
  public void close() {
    for (ManagedChannel channel : channels) channel.shutdownNow();
    boolean interrupted = false;
    try {
      for (ManagedChannel channel : channels) channel.awaitTermination(5, TimeUnit.SECONDS);
      callbacks.shutdownNow();
      timers.shutdownNow();
      grpc.shutdown();
      eventLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      callbacks.awaitTermination(5, TimeUnit.SECONDS);
      timers.awaitTermination(5, TimeUnit.SECONDS);
      grpc.awaitTermination(5, TimeUnit.SECONDS);
      eventLoop.terminationFuture().await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      interrupted = true;
    }
    if (interrupted) Thread.currentThread().interrupt();
  }

  private static ExecutorService cachedPool(String role) {
    return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), named(role));
  }

  private static java.util.concurrent.ThreadFactory named(String role) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, PREFIX + role + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
