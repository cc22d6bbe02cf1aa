import { expect } from "chai";
import { clusterScaleOutTable, shapesSection } from "../../bench/report/shapes-section.js";
import { busiestOnCluster, type ClusterScaleOutRow } from "../../bench/shapes/cluster-scale-out.js";
import type { ProcessSpreadResult } from "../../bench/shapes/process-spread.js";
import type { ScaleOutRow } from "../../bench/shapes/scale-out.js";
import { counters, spread } from "./bench-result-fixtures.js";

/** A spread result in processes: `cyclesPerS` over a 1 s window with the CPU shares given. */
function run(cyclesPerS: number, coordinatorCores: number[], masterCores: number[]): ProcessSpreadResult {
  const base = spread("turnstile-processes", cyclesPerS, counters(undefined, 0.4));
  return { ...base, coordinatorCores, clientCoresMax: 0.2, clientCores: 0.4, otherCores: masterCores };
}

function clusterRow(coordinators: number, cyclesPerS: number, coords: number[], masters: number[]): ClusterScaleOutRow {
  const result = run(cyclesPerS, coords, masters);
  return {
    masters: 3,
    coordinators,
    workers: 64,
    result,
    masterCores: masters,
    busiest: busiestOnCluster(result, masters),
  };
}

describe("bench: the Cluster scale-out row", () => {
  it("names the busiest process among coordinators, contender processes and each master", () => {
    const r = run(1000, [0.3, 0.2], [0.1, 0.45, 0.2]);
    expect(busiestOnCluster(r, [0.1, 0.45, 0.2])).to.deep.equal({ process: "Redis master 2", cores: 0.45 });
    expect(busiestOnCluster(run(1000, [0.9], [0.1, 0.1, 0.1]), [0.1, 0.1, 0.1]).process).to.equal("coordinator 1");
  });

  it("reports the aggregate rate beside the single-Redis row at the same size, each master's CPU and the sizing per core", () => {
    const single: ScaleOutRow = {
      coordinators: 1,
      workers: 64,
      result: { ...run(4000, [0.5], []), redisCores: 0.3 },
      busiest: { process: "coordinator 1", cores: 0.5 },
    };
    const rows = [clusterRow(1, 5000, [0.5], [0.1, 0.1, 0.2]), clusterRow(2, 6000, [0.3, 0.3], [0.1, 0.1, 0.1])];
    const table = clusterScaleOutTable(rows, [single]);
    const [first, second] = table.split("\n").slice(2);
    // 5,000 cycles/s is 1.25× one Redis's 4,000; 10,000 operations/s over 0.5 coordinator core and 0.4 master cores.
    expect(first).to.match(/^\| 1 \| 64 \| 5,000 \| 1\.25× \|/);
    expect(first).to.include("| 10%, 10%, 20% | coordinator 1 (50%) | 20,000 | 25,000 |");
    // No single-Redis row with 2 coordinators to compare with.
    expect(second).to.match(/^\| 2 \| 64 \| 6,000 \| – \|/);
    const section = shapesSection([single], 2, rows);
    expect(section).to.include("### Scale-out: coordinators on a Redis Cluster of 3 masters");
    expect(section).to.include(table);
    expect(shapesSection([single], 2)).to.include("The Cluster scale-out was not run in this invocation.");
  });
});
