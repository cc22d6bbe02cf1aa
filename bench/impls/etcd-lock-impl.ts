import { fileURLToPath } from "node:url";
import { type Client, credentials, loadPackageDefinition, type ServiceClientConstructor } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { LockImpl } from "./lock-impl.js";

const PROTO_DIR = fileURLToPath(new URL("./etcd/", import.meta.url));
// Longer than any run: the bench revokes each lease when it closes, so no keepalive is needed.
const LEASE_TTL_S = 600;

type Unary<Req, Res> = (request: Req, callback: (err: Error | null, response: Res) => void) => void;
interface LeaseStub extends Client {
  leaseGrant: Unary<{ TTL: number }, { ID: string; error: string }>;
  leaseRevoke: Unary<{ ID: string }, unknown>;
}
interface LockStub extends Client {
  lock: Unary<{ name: Buffer; lease: string }, { key: Buffer }>;
  unlock: Unary<{ key: Buffer }, unknown>;
}

function call<Req, Res>(stub: Client, method: Unary<Req, Res>, request: Req): Promise<Res> {
  return new Promise((resolve, reject) =>
    method.call(stub, request, (err, response) => (err ? reject(err) : resolve(response))),
  );
}

/**
 * etcd's v3lock service over gRPC: each contender grants itself a lease, `Lock` blocks in etcd
 * until the contender's key is the oldest under the lock's prefix (etcd watches the predecessor:
 * no polling), and `Unlock` deletes the key.
 */
export function etcdLockImpl(address: string, etcdVersion: string): LockImpl {
  const definition = loadSync(["v3lock.proto"], { includeDirs: [PROTO_DIR], longs: String, keepCase: false });
  const root = loadPackageDefinition(definition) as unknown as {
    etcdserverpb: { Lease: ServiceClientConstructor };
    v3lockpb: { Lock: ServiceClientConstructor };
  };
  return {
    id: "etcd",
    label: "etcd v3lock",
    waits: "etcd watches the predecessor key (push); Raft commit per lock and unlock",
    version: `etcd ${etcdVersion}`,
    async connect() {
      const lease = new root.etcdserverpb.Lease(address, credentials.createInsecure()) as unknown as LeaseStub;
      const locks = new root.v3lockpb.Lock(address, credentials.createInsecure()) as unknown as LockStub;
      const granted = await call(lease, lease.leaseGrant, { TTL: LEASE_TTL_S });
      if (granted.error) throw new Error(`etcd lease grant: ${granted.error}`);
      return {
        async acquire(name) {
          const { key } = await call(locks, locks.lock, { name: Buffer.from(name), lease: granted.ID });
          return {
            async release() {
              await call(locks, locks.unlock, { key });
            },
          };
        },
        async close() {
          await call(lease, lease.leaseRevoke, { ID: granted.ID }).catch(() => {});
          lease.close();
          locks.close();
        },
      };
    },
  };
}
