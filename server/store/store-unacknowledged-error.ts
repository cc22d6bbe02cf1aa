import { StoreUnavailableError } from "./store-unavailable-error.js";

/**
 * A write the store applied on its primary but could not get acknowledged by enough replicas in
 * time: its outcome is unknown (a failover may keep or lose it). Callers answer UNAVAILABLE with
 * this message, which names the replica count seen, and tell no client anything the write decided.
 */
export class StoreUnacknowledgedError extends StoreUnavailableError {
  constructor(
    /** Replicas that acknowledged the write. */
    readonly acked: number,
    /** Replicas the setting asks for. */
    readonly wanted: number,
    message: string,
  ) {
    super(message);
    this.name = "StoreUnacknowledgedError";
  }
}
