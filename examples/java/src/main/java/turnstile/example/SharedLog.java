package turnstile.example;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Appends lines to a file that several processes write at once. The channel is opened with
 * APPEND (O_APPEND) and each line goes out in one write, so lines from different writers never
 * interleave.
 */
final class SharedLog implements AutoCloseable {
  private final FileChannel channel;

  SharedLog(Path path) throws IOException {
    channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
  }

  /** Writes "{event} {worker} {token}\n" in one write. */
  void append(String event, String worker, long token) throws IOException {
    String line = event + " " + worker + " " + Long.toUnsignedString(token) + "\n";
    ByteBuffer bytes = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
    channel.write(bytes);
    if (bytes.hasRemaining()) throw new IOException("short write to the shared log");
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
