import { type Server, ServerCredentials } from "@grpc/grpc-js";
import type { Redis } from "ioredis";

/** Raw bytes both ways: the bench's floor servers take and give no protobuf. */
export const rawBytes = (b: Buffer) => b;

/** A bidi method on raw bytes at `path`, as Server.addService and Client.makeBidiStreamRequest take it. */
export function rawBidiMethod(path: string) {
  return {
    path,
    requestStream: true,
    responseStream: true,
    requestSerialize: rawBytes,
    requestDeserialize: rawBytes,
    responseSerialize: rawBytes,
    responseDeserialize: rawBytes,
  };
}

/**
 * Serves `server` on a free loopback port and prints "listening PORT" (what the bench waits for); on
 * SIGTERM shuts it down and disconnects `redis`, so the process exits.
 */
export function listenOnFreePort(server: Server, redis: Redis): void {
  server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    process.stdout.write(`listening ${port}\n`);
  });
  process.once("SIGTERM", () => {
    server.forceShutdown();
    redis.disconnect();
  });
}
