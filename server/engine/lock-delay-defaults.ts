/**
 * The serve default lock-delay of acquires that set none (`--lock-delay`, docs/operations.md): by lock-name
 * prefix, the longest matching prefix wins; a name no prefix matches gets none (0).
 */
export class LockDelayDefaults {
  private readonly prefixes: [string, number][];

  constructor(delays: Readonly<Record<string, number>> = {}) {
    this.prefixes = Object.entries(delays).sort(([a], [b]) => b.length - a.length);
  }

  /** The default lock-delay of `name` in ms; 0: none. */
  of(name: string): number {
    return this.prefixes.find(([prefix]) => name.startsWith(prefix))?.[1] ?? 0;
  }
}
