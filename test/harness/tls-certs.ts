import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** PEM files of a throwaway CA and a server certificate it signed for IP 127.0.0.1. */
export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

/** Makes a CA and a 127.0.0.1 server certificate (EC P-256, valid one day) in `dir` with openssl. */
export function makeTlsFiles(dir: string): TlsFiles {
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.crt"),
    "-days",
    "1",
    "-subj",
    "/CN=turnstile-test-ca",
  );
  openssl("req", ...ec, "-keyout", at("server.key"), "-out", at("server.csr"), "-subj", "/CN=127.0.0.1");
  writeFileSync(at("ext.cnf"), "subjectAltName=IP:127.0.0.1\n");
  openssl(
    "x509",
    "-req",
    "-in",
    at("server.csr"),
    "-CA",
    at("ca.crt"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-out",
    at("server.crt"),
    "-days",
    "1",
    "-extfile",
    at("ext.cnf"),
  );
  return { ca: at("ca.crt"), cert: at("server.crt"), key: at("server.key") };
}
