import { createRequire } from "node:module";

interface RedisSuite {
  file: string;
  chain: string[];
}
const { suiteGroups } = createRequire(import.meta.url)("./suite-groups.cjs") as {
  suiteGroups(): { redis: RedisSuite[] };
};

// Loaded by .mocharc.cjs only when redis-server is missing, in place of the suites that need it:
// one pending test per such suite says which it is and why it did not run.
describe("Suites that need Redis (skipped: redis-server is not on PATH; sudo apt-get install -y redis-server)", () => {
  for (const { file, chain } of suiteGroups().redis) {
    it.skip(`${file}: skipped, starts redis-server through ${chain.slice(1).join(" -> ")}`, () => {});
  }
});
