import { expect } from "chai";
import { runTurnstile } from "../harness/run-turnstile.js";

// Every CLI duration that ends up in a Node timer (or a gRPC deadline) is bounded by the longest
// timer, 2^31 - 1 ms: beyond it setTimeout fires after 1 ms, and grpc-js throws. These are refused
// while the arguments are read, so no coordinator is needed (127.0.0.1:1 is never dialled).
describe("turnstile durations above the longest timer (processes)", () => {
  it("refuses lock --grace/--ttl/--wait, health --timeout and keys --timeout above 2147483647 ms with exit 2 and one line naming the flag and the maximum", async function () {
    this.timeout(120_000);
    const lock = (flag: string, value: string) => ["lock", "--server", "127.0.0.1:1", flag, value, "x", "--", "true"];
    const cases: [string[], string][] = [
      [
        lock("--grace", "30d"),
        'turnstile lock: --grace "30d" is out of range: must be 0..2147483647ms (SIGTERM to SIGKILL) (see turnstile lock --help)\n',
      ],
      [
        lock("--ttl", "25d"),
        'turnstile lock: --ttl "25d" is out of range: must be 1ms..2147483647ms (the session lease) (see turnstile lock --help)\n',
      ],
      [
        lock("--wait", "30d"),
        'turnstile lock: --wait "30d" is out of range: must be 0..2147483647ms (0 tries once, leave --wait out to wait forever) (see turnstile lock --help)\n',
      ],
      [
        ["health", "--server", "127.0.0.1:1", "--timeout", "9999999d"],
        'turnstile health: --timeout must be a duration above 0, at most 2147483647ms (about 24.8d), such as 3s, got "9999999d" (see turnstile health --help)\n',
      ],
      [
        ["keys", "--server", "127.0.0.1:1", "--timeout", "30d"],
        'turnstile keys: --timeout must be a duration above 0, at most 2147483647ms (about 24.8d), such as 3s, got "30d" (see turnstile keys --help)\n',
      ],
    ];
    // One after another: in parallel they starve a 2-core machine.
    for (const [args, stderr] of cases) {
      const run = await runTurnstile(args, { timeoutMs: 30_000 });
      expect([run.code, run.stderr], args.join(" ")).to.deep.equal([2, stderr]);
    }
  });
});
