import { type HeldWait, heldWaitKey, type WaitRegistry } from "../wait-registry.js";

/** The registry of hold-and-wait acquires in process: the embedded store's twin of RedisWaitRegistry. */
export class MemoryWaitRegistry implements WaitRegistry {
  private readonly entries = new Map<string, { wait: HeldWait; expiresAtMs: number }>();

  async put(waits: readonly HeldWait[], expiresAtMs: number): Promise<void> {
    for (const wait of waits) this.entries.set(heldWaitKey(wait), { wait: { ...wait }, expiresAtMs });
  }

  async remove(waits: readonly HeldWait[]): Promise<void> {
    for (const wait of waits) this.entries.delete(heldWaitKey(wait));
  }

  async list(nowMs: number): Promise<HeldWait[]> {
    const live: HeldWait[] = [];
    for (const [key, { wait, expiresAtMs }] of this.entries) {
      if (expiresAtMs <= nowMs) this.entries.delete(key);
      else live.push({ ...wait });
    }
    return live;
  }
}
