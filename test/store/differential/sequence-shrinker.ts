/**
 * Shrinks a failing sequence by delta debugging (Zeller's ddmin, complements only): splits it into
 * `n` chunks and keeps the first sequence without one chunk that still fails, with fewer chunks;
 * when none fails, splits finer, until chunks are single steps. Every candidate is re-run from
 * scratch by `fails` (fresh stores), so what it answers is a sequence that fails on its own.
 * Stops early after `maxRuns` candidates, answering the shortest failing sequence found so far.
 */
export async function shrinkSequence<T>(
  sequence: readonly T[],
  fails: (candidate: readonly T[]) => Promise<boolean>,
  maxRuns = 400,
): Promise<T[]> {
  let current = [...sequence];
  let chunks = 2;
  let runs = 0;
  while (current.length >= 2 && runs < maxRuns) {
    const size = Math.ceil(current.length / chunks);
    let smaller: T[] | undefined;
    for (let start = 0; start < current.length && runs < maxRuns; start += size) {
      const candidate = [...current.slice(0, start), ...current.slice(start + size)];
      runs++;
      if (await fails(candidate)) {
        smaller = candidate;
        break;
      }
    }
    if (smaller) {
      current = smaller;
      chunks = Math.max(chunks - 1, 2);
    } else if (size === 1) break;
    else chunks = Math.min(chunks * 2, current.length);
  }
  return current;
}
