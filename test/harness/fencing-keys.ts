import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Ed25519 private keys in PEM files, as `serve --fencing-key` reads them, in a temporary directory. */
export interface FencingKeyFiles {
  files: string[];
  /** A file holding an RSA key (refused by --fencing-key). */
  rsaFile: string;
  remove(): void;
}

/** Writes `count` fresh Ed25519 keys (and one RSA key) to PEM files. */
export function writeFencingKeys(count: number): FencingKeyFiles {
  const dir = mkdtempSync(join(tmpdir(), "turnstile-fencing-"));
  const files = Array.from({ length: count }, (_, i) => {
    const file = join(dir, `fencing-${i + 1}.pem`);
    const { privateKey } = generateKeyPairSync("ed25519");
    writeFileSync(file, privateKey.export({ type: "pkcs8", format: "pem" }));
    return file;
  });
  const rsaFile = join(dir, "rsa.pem");
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 1024 });
  writeFileSync(rsaFile, privateKey.export({ type: "pkcs8", format: "pem" }));
  return { files, rsaFile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
