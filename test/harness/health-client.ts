import { type ClientReadableStream, credentials, loadPackageDefinition, type ServiceError } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath } from "grpc-health-check";

type Status = "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN";
type HealthStub = {
  check(req: { service: string }, cb: (err: ServiceError | null, res?: { status: Status }) => void): void;
  watch(req: { service: string }): ClientReadableStream<{ status: Status }>;
  close(): void;
};

/**
 * A grpc.health.v1.Health client built from the protocol's .proto (as any load balancer would
 * speak it): `check` asks once; `watch` records every status pushed and waits for one.
 */
export class HealthClient {
  private readonly stub: HealthStub;
  private watches: ClientReadableStream<{ status: Status }>[] = [];

  constructor(address: string) {
    const pkg = loadPackageDefinition(loadSync(protoPath, { enums: String })) as unknown as {
      grpc: { health: { v1: { Health: new (address: string, creds: unknown) => HealthStub } } };
    };
    this.stub = new pkg.grpc.health.v1.Health(address, credentials.createInsecure());
  }

  check(service = ""): Promise<Status> {
    return new Promise((resolve, reject) =>
      this.stub.check({ service }, (err, res) => (err ? reject(err) : resolve(res!.status))),
    );
  }

  /** Opens a Watch; the returned function resolves once `status` has been pushed (now or later). */
  watch(service = ""): (status: Status, timeoutMs?: number) => Promise<void> {
    const seen: Status[] = [];
    const waiters = new Set<() => void>();
    const stream = this.stub.watch({ service });
    this.watches.push(stream);
    stream.on("data", (r: { status: Status }) => {
      seen.push(r.status);
      for (const w of [...waiters]) w();
    });
    stream.on("error", () => {});
    return (status, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (seen.at(-1) !== status) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`health watch: no ${status} within ${timeoutMs} ms (saw ${seen.join(", ") || "nothing"})`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
  }

  close(): void {
    for (const w of this.watches) w.cancel();
    this.stub.close();
  }
}
