import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";

/** What one TLS flag must hold. */
export type PemKind = "ca" | "cert" | "key";

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const HAS_CERTIFICATE = /-----BEGIN CERTIFICATE-----/;
const PRIVATE_KEY = /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/;

/**
 * Reads the PEM file of `--tls-ca`, `--tls-cert` or `--tls-key` and checks that it holds what the
 * flag needs, so a wrong file is named with what is wrong instead of a TLS handshake error later.
 * Returns the PEM text, or one line naming the flag, the file and the problem (never key material).
 */
export function readPem(flag: string, path: string, kind: PemKind): { pem: string } | string {
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch (err) {
    return `${flag} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code})`;
  }
  const problem = kind === "key" ? keyProblem(pem) : certificateProblem(pem, kind);
  return problem === undefined ? { pem } : `${flag} ${path}: ${problem}`;
}

/** Whether `certPem`'s first certificate belongs to `keyPem`; one line saying not, or undefined. */
export function pairProblem(certPem: string, keyPem: string): string | undefined {
  const first = certPem.match(CERTIFICATE)?.[0];
  if (first === undefined) return undefined;
  return new X509Certificate(first).checkPrivateKey(createPrivateKey(keyPem))
    ? undefined
    : "the private key does not belong to the certificate";
}

function keyProblem(pem: string): string | undefined {
  if (!PRIVATE_KEY.test(pem))
    return HAS_CERTIFICATE.test(pem) ? "holds a certificate, not a private key" : "is not a PEM private key";
  try {
    createPrivateKey(pem);
    return undefined;
  } catch {
    return "holds a private key that cannot be read (encrypted keys are not supported)";
  }
}

function certificateProblem(pem: string, kind: "ca" | "cert"): string | undefined {
  const blocks = pem.match(CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    if (PRIVATE_KEY.test(pem))
      return kind === "ca"
        ? "holds a private key, not a CA certificate (give the CA certificate that signed the coordinator's)"
        : "holds a private key, not a certificate (the key goes to --tls-key)";
    return "is not a PEM certificate";
  }
  let certificates: X509Certificate[];
  try {
    certificates = blocks.map((block) => new X509Certificate(block));
  } catch (err) {
    return `holds a certificate that cannot be read (${(err as Error).message})`;
  }
  if (kind === "cert") return undefined;
  // A self-signed certificate may be trusted as its own CA; a leaf signed by someone else never is.
  const usable = certificates.some((c) => c.ca || c.subject === c.issuer);
  if (usable) return undefined;
  const subject = certificates[0].subject.replace(/\n/g, ", ");
  return `"${subject}" is not a CA certificate (no CA:TRUE, and it is not self-signed): give the CA that signed the coordinator's certificate`;
}
