// `npx tsx bench/fencing-sign-cost.ts [N]`: the CPU one fencing proof costs the coordinator — N
// (default 20,000) proofs after a warm-up, signed on the event loop (FencingSigner.sign, a hand-off's
// proof signed ahead) and on libuv's thread pool one at a time (FencingSigner.signLater, any other
// grant): CPU µs per proof of the whole process, every thread included (docs/fencing.md, *Cost*).
import { generateKeyPairSync } from "node:crypto";
import { FencingKeys } from "../server/security/fencing/fencing-keys.js";
import { FencingSigner } from "../server/security/fencing/fencing-signer.js";

const n = Number(process.argv[2] ?? 20_000);
const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string;
const { privateKey, jwk } = FencingKeys.fromPem(pem, "generated");
const signer = new FencingSigner({ kid: jwk.kid, privateKey });
const holder = { caller: "billing-svc", client: "worker-7", session: "0f9c2b7e4d1a4c3b9e8f", owner: "owner-1" };
for (let i = 0; i < 2000; i++) signer.sign("bench/lock", BigInt(i), holder);

/** Runs `signAll`, then prints CPU and wall µs per proof and the proofs' mean length. */
async function measure(label: string, signAll: () => Promise<number>): Promise<void> {
  const cpu = process.cpuUsage();
  const startMs = performance.now();
  const bytes = await signAll();
  const used = process.cpuUsage(cpu);
  console.log(
    `${label}: ${n} proofs, ${((used.user + used.system) / n).toFixed(1)} µs CPU each ` +
      `(${(((performance.now() - startMs) * 1000) / n).toFixed(1)} µs wall), ${Math.round(bytes / n)} bytes each`,
  );
}

await measure("on the event loop (sign)", async () => {
  let bytes = 0;
  for (let i = 0; i < n; i++) bytes += signer.sign("bench/lock", BigInt(1_000_000 + i), holder).length;
  return bytes;
});
await measure("on the thread pool, one at a time (signLater)", async () => {
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    bytes += await new Promise<number>((resolve, reject) =>
      signer.signLater("bench/lock", BigInt(2_000_000 + i), holder, (err, proof) =>
        err ? reject(err) : resolve(proof.length),
      ),
    );
  }
  return bytes;
});
