import { spawnSync } from "node:child_process";

// The image and the unit listen on 0.0.0.0:7420, as documented, with no override. So that two test
// runs (or a coordinator someone started on 7420) on one machine do not collide, each runs in a
// network namespace of its own with only a loopback interface, as a container has; its probes join it.

let available: boolean | undefined;

/** Whether this machine lets the tests make network namespaces (root with unshare, nsenter and ip). */
export function ownNetworkAvailable(): boolean {
  available ??=
    spawnSync("unshare", ["-n", "sh", "-c", "ip link set lo up"], { stdio: "ignore" }).status === 0 &&
    spawnSync("nsenter", ["--version"], { stdio: "ignore" }).status === 0;
  return available;
}

/** `argv` run in a new network namespace whose loopback is up; the process keeps the namespace's pid. */
export function inOwnNetwork(argv: string[]): string[] {
  return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", ...argv];
}

/** `argv` run in the network namespace of process `pid` (started with inOwnNetwork). */
export function inNetworkOf(pid: number, argv: string[]): string[] {
  return ["nsenter", "-t", String(pid), "-n", "--", ...argv];
}
