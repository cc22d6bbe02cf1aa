import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ChannelCredentials, credentials, Metadata } from "@grpc/grpc-js";

/** PEM files of one certificate and its key. */
export interface CertFiles {
  cert: string;
  key: string;
}

/** What a leaf certificate says about its holder. */
export interface LeafSpec {
  /** Subject CN. */
  cn: string;
  /** subjectAltName entries, e.g. ["URI:spiffe://corp/billing", "DNS:billing.corp"]. */
  san?: string[];
  /** Validity in days; -1 makes a certificate that has already expired. Default 1. */
  days?: number;
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/**
 * A throwaway certificate authority in `dir`, made with openssl: it signs server certificates for
 * 127.0.0.1 and client certificates with any CN and SANs (also expired ones), for TLS and mTLS tests.
 */
export class TestPki {
  readonly ca: string;
  private readonly caKey: string;

  constructor(
    private readonly dir: string,
    readonly name = "ca",
  ) {
    this.ca = join(dir, `${name}.crt`);
    this.caKey = join(dir, `${name}.key`);
    openssl(
      "req",
      "-x509",
      ...EC,
      "-keyout",
      this.caKey,
      "-out",
      this.ca,
      "-days",
      "2",
      "-subj",
      `/CN=turnstile-test-${name}`,
    );
  }

  /** PEM text of the CA certificate (what a client passes as `tls.ca`). */
  get caPem(): string {
    return readFileSync(this.ca, "utf8");
  }

  /** A server certificate for 127.0.0.1 and localhost, stored under `file`.crt/.key. */
  server(file = "server", days = 1): CertFiles {
    return this.leaf(file, { cn: "127.0.0.1", san: ["IP:127.0.0.1", "DNS:localhost"], days });
  }

  /** A certificate signed by this CA for `spec`, stored as `file`.crt and `file`.key. */
  leaf(file: string, spec: LeafSpec): CertFiles {
    const at = (ext: string) => join(this.dir, `${file}.${ext}`);
    openssl("req", ...EC, "-keyout", at("key"), "-out", at("csr"), "-subj", `/CN=${spec.cn}`);
    const ext = spec.san?.length ? `subjectAltName=${spec.san.join(",")}\n` : "basicConstraints=CA:FALSE\n";
    writeFileSync(at("ext"), ext);
    openssl(
      ...["x509", "-req", "-in", at("csr"), "-CA", this.ca, "-CAkey", this.caKey, "-CAcreateserial"],
      ...["-out", at("crt"), "-days", String(spec.days ?? 1), "-extfile", at("ext")],
    );
    return { cert: at("crt"), key: at("key") };
  }
}

/** The PEM text of a certificate pair, as the TS client's `tls` option takes it. */
export function pemOf(files: CertFiles): { cert: string; key: string } {
  return { cert: readFileSync(files.cert, "utf8"), key: readFileSync(files.key, "utf8") };
}

function openssl(...args: string[]): void {
  execFileSync("openssl", args, { stdio: "ignore" });
}

/** grpc-js channel credentials trusting `caFile`, with a client pair (mTLS) and/or a bearer token. */
export function clientCredentials(caFile: string, client?: CertFiles, token?: string): ChannelCredentials {
  const pem = client && pemOf(client);
  const tls = credentials.createSsl(
    readFileSync(caFile),
    pem ? Buffer.from(pem.key) : null,
    pem ? Buffer.from(pem.cert) : null,
  );
  if (token === undefined) return tls;
  const bearer = credentials.createFromMetadataGenerator((_p, callback) => {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${token}`);
    callback(null, metadata);
  });
  return credentials.combineChannelCredentials(tls, bearer);
}
