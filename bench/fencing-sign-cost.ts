// `npx tsx bench/fencing-sign-cost.ts [N]`: the CPU one fencing proof costs the coordinator — N
// (default 20,000) FencingSigner.sign calls after a warm-up, CPU µs per proof (docs/fencing.md, *Cost*).
import { generateKeyPairSync } from "node:crypto";
import { FencingKeys } from "../server/security/fencing/fencing-keys.js";
import { FencingSigner } from "../server/security/fencing/fencing-signer.js";

const n = Number(process.argv[2] ?? 20_000);
const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string;
const { privateKey, jwk } = FencingKeys.fromPem(pem, "generated");
const signer = new FencingSigner({ kid: jwk.kid, privateKey });
const holder = { caller: "billing-svc", client: "worker-7", session: "0f9c2b7e4d1a4c3b9e8f", owner: "owner-1" };
for (let i = 0; i < 2000; i++) signer.sign("bench/lock", BigInt(i), holder);
const cpu = process.cpuUsage();
const startMs = performance.now();
let bytes = 0;
for (let i = 0; i < n; i++) bytes += signer.sign("bench/lock", BigInt(1_000_000 + i), holder).length;
const used = process.cpuUsage(cpu);
console.log(
  `${n} proofs: ${((used.user + used.system) / n).toFixed(1)} µs CPU each ` +
    `(${(((performance.now() - startMs) * 1000) / n).toFixed(1)} µs wall), ${Math.round(bytes / n)} bytes each`,
);
