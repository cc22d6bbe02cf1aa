/**
 * True when `host` (a hostname or IP address, IPv6 with or without brackets) names this machine's
 * loopback interface: "localhost", 127.0.0.0/8 or ::1.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
