/** How lock names map to the `prefix` label: a list of prefixes, or the first `depth` segments. */
export interface NamePrefixOptions {
  /** Names starting with one of these (the longest that matches) get it as their label. */
  prefixes?: readonly string[];
  /** Without `prefixes`: a name's label is its text up to and including its `depth`-th "/" (default 1). */
  depth?: number;
  /** At most this many distinct labels (default 100); names that would add more go to "other". */
  maxLabels?: number;
}

/** The label of names that match no prefix, have no "/", or came after the label cap was reached. */
const OTHER_PREFIX = "other";

/**
 * Maps lock names to a bounded set of metric label values, so that no series is ever made per
 * lock name. With a list, a name's label is the longest listed prefix it starts with, else
 * "other". With a depth N, it is the name cut after its N-th "/" (after its last "/" when it has
 * fewer; "other" when it has none), so a label always ends in "/". In
 * both modes at most `maxLabels` labels are handed out; later ones become "other".
 */
export class NamePrefixes {
  private readonly prefixes: readonly string[] | undefined;
  private readonly depth: number;
  private readonly maxLabels: number;
  private readonly seen = new Set<string>();

  constructor(options: NamePrefixOptions = {}) {
    this.prefixes = options.prefixes?.length ? [...options.prefixes].sort((a, b) => b.length - a.length) : undefined;
    this.depth = options.depth ?? 1;
    this.maxLabels = options.maxLabels ?? 100;
  }

  /** The label of `name`. */
  of(name: string): string {
    const label = this.prefixes ? this.listed(name) : this.cut(name);
    if (label === OTHER_PREFIX || this.seen.has(label)) return label;
    if (this.seen.size >= this.maxLabels) return OTHER_PREFIX;
    this.seen.add(label);
    return label;
  }

  private listed(name: string): string {
    return this.prefixes?.find((p) => name.startsWith(p)) ?? OTHER_PREFIX;
  }

  private cut(name: string): string {
    let end = -1;
    for (let i = 0; i < this.depth; i++) {
      const next = name.indexOf("/", end + 1);
      if (next < 0) break;
      end = next;
    }
    return end < 0 ? OTHER_PREFIX : name.slice(0, end + 1);
  }
}
