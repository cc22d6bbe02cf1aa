import { ServerCredentials } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { AccessPolicy } from "./access-policy.js";
import { Authorizer } from "./authorizer.js";
import { ReloadableFile } from "./reloadable-file.js";
import { TlsCertificates, type TlsFiles } from "./tls-certificates.js";
import { TokenFile } from "./token-file.js";

/** The security settings of `turnstile serve` (docs/security.md); all optional. */
export interface SecuritySettings {
  tls?: TlsFiles;
  /** Bearer tokens: IDENTITY SHA256-HEX lines. */
  tokenFile?: string;
  /** Who may do what (JSON); needs a source of identities (client CA or token file). */
  policyFile?: string;
}

/**
 * A coordinator's transport security and access control, built from its settings: the gRPC port's
 * credentials (TLS, mTLS with a client CA) and the authorizer. Its files are re-read when they
 * change and on `reload()` (SIGHUP).
 */
export class Security {
  private constructor(
    readonly credentials: ServerCredentials,
    readonly authorizer: Authorizer,
    /** The server certificates when TLS is on (the web console serves HTTPS with them too). */
    readonly tls: TlsCertificates | undefined,
    private readonly files: { reload(): boolean; close(): void }[],
  ) {}

  /** Plaintext, no authentication, no authorization. */
  static open(): Security {
    return new Security(ServerCredentials.createInsecure(), Authorizer.OPEN, undefined, []);
  }

  /** Reads every file now; throws a SecurityFileError naming the file and what is wrong. */
  static load(settings: SecuritySettings, log: Logger): Security {
    const files: { reload(): boolean; close(): void }[] = [];
    try {
      const tls = settings.tls && new TlsCertificates(settings.tls, log);
      if (tls) files.push(tls);
      const tokens = settings.tokenFile
        ? new ReloadableFile(settings.tokenFile, TokenFile.parse, log, "token file")
        : undefined;
      if (tokens) files.push(tokens);
      const policy = settings.policyFile
        ? new ReloadableFile(settings.policyFile, AccessPolicy.parse, log, "policy")
        : undefined;
      if (policy) files.push(policy);
      const authorizer = new Authorizer({
        requireIdentity: Boolean(tokens || settings.tls?.clientCa),
        tokens: tokens && (() => tokens.current),
        policy: policy && (() => policy.current),
      });
      return new Security(tls?.credentials() ?? ServerCredentials.createInsecure(), authorizer, tls, files);
    } catch (err) {
      for (const f of files) f.close();
      throw err;
    }
  }

  /** Re-reads every file (SIGHUP); true when all of them are now in force. */
  reload(): boolean {
    return this.files.map((f) => f.reload()).every(Boolean);
  }

  /** Stops watching the files. */
  close(): void {
    for (const f of this.files) f.close();
  }
}
