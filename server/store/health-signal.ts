/**
 * A boolean health state with change listeners, as both stores report it: `set` notifies every
 * listener once per actual change, in the order they were added.
 */
export class HealthSignal {
  private readonly listeners = new Set<(healthy: boolean) => void>();

  constructor(private value: boolean) {}

  get healthy(): boolean {
    return this.value;
  }

  set(healthy: boolean): void {
    if (healthy === this.value) return;
    this.value = healthy;
    for (const listener of [...this.listeners]) listener(healthy);
  }

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: (healthy: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
