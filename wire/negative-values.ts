/**
 * Joins `--flag -1s` into `--flag=-1s` for the given string flags, so a negative value reaches the
 * CLI's or `turnstile serve`'s own validation (which names the flag and the rule) instead of
 * node:util parseArgs, which takes it for an option and answers "argument is ambiguous".
 */
export function joinNegativeValues(argv: string[], flags: Iterable<string>): string[] {
  const names = new Set([...flags].map((flag) => `--${flag}`));
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1];
    if (names.has(argv[i]) && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${argv[i]}=${next}`);
      i++;
    } else {
      joined.push(argv[i]);
    }
  }
  return joined;
}
