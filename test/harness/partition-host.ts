// The proxies of a PartitionNetwork, in a process of their own so that the bytes they forward never
// wait on the test's own work. Forked by partition-network.ts; every IPC message is a request
// { id, op: "proxy", target } | { id, op: "cut", port, from: number[] | "all", direction } |
// { id, op: "restore", cut }, answered { id, result } or { id, error }.
import { type Cut, type CutDirection, PartitionProxy } from "./partition-proxy.js";

const proxies = new Map<number, PartitionProxy>();
const cuts = new Map<number, Cut>();
let nextCut = 1;

type Request =
  | { id: number; op: "proxy"; target: string }
  | { id: number; op: "cut"; port: number; from: number[] | "all"; direction: CutDirection }
  | { id: number; op: "restore"; cut: number };

async function handle(m: Request): Promise<unknown> {
  if (m.op === "proxy") {
    const proxy = await PartitionProxy.start(m.target);
    proxies.set(proxy.port, proxy);
    return proxy.port;
  }
  if (m.op === "cut") {
    const proxy = proxies.get(m.port);
    if (!proxy) throw new Error(`no proxy on port ${m.port}`);
    const id = nextCut++;
    cuts.set(id, await proxy.cut(m.from === "all" ? "all" : new Set(m.from), m.direction));
    return id;
  }
  cuts.get(m.cut)?.restore();
  cuts.delete(m.cut);
  return null;
}

process.on("message", (m: Request) => {
  handle(m).then(
    (result) => process.send?.({ id: m.id, result }),
    (err) => process.send?.({ id: m.id, error: (err as Error).message }),
  );
});
// The parent gone, the network goes too.
process.on("disconnect", () => process.exit(0));
process.send?.({ ready: true });
