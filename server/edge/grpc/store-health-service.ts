import type { Server } from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import type { Logger } from "pino";
import type { Store } from "../../store/store.js";

/** The service name health checks may ask about besides "" (the whole server). */
export const LOCK_SERVICE_NAME = "turnstile.v1.LockService";

/**
 * grpc.health.v1.Health for one coordinator: "" and "turnstile.v1.LockService" are SERVING while
 * the store is connected and NOT_SERVING while it is not, following the store's health events
 * (Check and Watch both), and each change is logged (store lost: warn; back: info). After
 * `shutdown` they stay NOT_SERVING.
 */
export class StoreHealthService {
  private readonly health = new HealthImplementation();
  private readonly unsubscribe: () => void;

  constructor(store: Store, log: Logger) {
    this.set(store.healthy());
    // The first connect (unhealthy → healthy at start-up) is not news; a recovery after a loss is.
    let lost = false;
    this.unsubscribe = store.onHealthChange((healthy) => {
      if (!healthy) log.warn({ storeHealthy: false }, "store (Redis) unreachable: requests fail with UNAVAILABLE");
      else if (lost) log.info({ storeHealthy: true }, "store (Redis) reachable again");
      lost = !healthy;
      this.set(healthy);
    });
  }

  addToServer(server: Server): void {
    this.health.addToServer(server);
  }

  /** Reports NOT_SERVING for good, so load balancers drain this coordinator before it stops. */
  shutdown(): void {
    this.unsubscribe();
    this.set(false);
  }

  private set(healthy: boolean): void {
    const status: ServingStatus = healthy ? "SERVING" : "NOT_SERVING";
    for (const name of ["", LOCK_SERVICE_NAME]) this.health.setStatus(name, status);
  }
}
