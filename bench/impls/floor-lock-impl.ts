import { Client, type ClientDuplexStream, credentials } from "@grpc/grpc-js";
import { packageVersion } from "../env/package-version.js";
import { rawBytes } from "../env/raw-bytes-server.js";
import {
  FLOOR_LOCK_PATH,
  floorRequest,
  GRANTED,
  OP_ACQUIRE,
  OP_RELEASE,
  RELEASED,
} from "../floor-lock/floor-lock-wire.js";
import type { LockImpl } from "./lock-impl.js";

/**
 * The floor lock (bench/floor-lock/floor-lock-server.ts): the least a FIFO lock with a pushed grant and
 * its state in Redis can do, one EVALSHA per request on raw-byte grpc-js. Not a lock to run: it shows
 * what any coordinator of this shape costs on this machine, the bound under Turnstile's rows. `queued`:
 * the server also answers each waiting acquire with Queued, as Turnstile's protocol does (the client
 * reads and drops it).
 */
export function floorLockImpl(address: string, queued = false): LockImpl {
  return {
    id: queued ? "floor-queued" : "floor",
    label: queued
      ? "Floor lock with Queued answers (bench only)"
      : "Floor lock (bench only: the least a grpc-js coordinator on Redis does)",
    waits: `FIFO queue in the server's memory, one trivial EVALSHA per request; ${queued ? "a waiter is answered Queued, " : ""}the grant is pushed on the stream`,
    version: `bench/floor-lock, @grpc/grpc-js ${packageVersion("@grpc/grpc-js")}`,
    wireCommands: ["evalsha"],
    async connect() {
      const client = new Client(address, credentials.createInsecure());
      const call: ClientDuplexStream<Buffer, Buffer> = client.makeBidiStreamRequest(
        FLOOR_LOCK_PATH,
        rawBytes,
        rawBytes,
      );
      const acquires: (() => void)[] = [];
      const releases: (() => void)[] = [];
      call.on("data", (m: Buffer) => {
        if (m[0] === GRANTED[0]) acquires.shift()?.();
        else if (m[0] === RELEASED[0]) releases.shift()?.();
      });
      call.on("error", () => {});
      return {
        acquire(name) {
          return new Promise((resolve) => {
            acquires.push(() =>
              resolve({
                release: () =>
                  new Promise<void>((released) => {
                    releases.push(released);
                    call.write(floorRequest(OP_RELEASE, name));
                  }),
              }),
            );
            call.write(floorRequest(OP_ACQUIRE, name));
          });
        },
        async close() {
          call.end();
          client.close();
        },
      };
    },
  };
}
