import { hostname, userInfo } from "node:os";
import { type CallOptions, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import {
  type CredentialOptions,
  channelCredentials,
  readableDetails,
  WatchStream,
  withTransportHint,
} from "../client/admin.js";
import {
  type DescribeResponse,
  type ListRequest,
  type ListResponse,
  LockServiceClient,
  type RequestReleaseRequest,
  type RequestReleaseResponse,
  type RevokeRequest,
  type RevokeResponse,
} from "../gen/ts/turnstile/v1/turnstile.js";
import { OPERATOR_METADATA } from "../wire/operator-metadata.js";

// Unary calls fail fast on a refused connection; this bounds a coordinator that accepts and hangs.
const CALL_TIMEOUT_MS = 10_000;

/** A failed admin call: the gRPC status name and the server's details, for one line on stderr. */
export class AdminCallError extends Error {
  readonly code: number;

  /** `secure`: the call dialled TLS (for the hint of a TLS/plaintext mix-up). */
  constructor(method: string, err: ServiceError, secure = false) {
    const message = `${method} failed: ${status[err.code] ?? err.code} ${readableDetails(err.details)}`.trim();
    super(withTransportHint(message, err.details ?? "", secure), { cause: err });
    this.name = "AdminCallError";
    this.code = err.code;
  }
}

/**
 * The operator RPCs (Describe, List, Revoke, Watch) of one coordinator, over plaintext or TLS
 * (with a client certificate or token), as promises. Failed calls reject with an AdminCallError. Close it when done.
 */
export class AdminClient {
  readonly #rpc: LockServiceClient;
  readonly #callTimeoutMs: number;
  readonly #secure: boolean;

  /**
   * Opens a channel to `server` (HOST:PORT); connects lazily on the first call. Each call ends by
   * `callTimeoutMs` (default 10 s) with DEADLINE_EXCEEDED.
   */
  constructor(server: string, connection: CredentialOptions = {}, options: { callTimeoutMs?: number } = {}) {
    const credentials = channelCredentials(connection);
    this.#secure = credentials._isSecure();
    this.#rpc = new LockServiceClient(server, credentials);
    this.#callTimeoutMs = options.callTimeoutMs ?? CALL_TIMEOUT_MS;
  }

  /** One lock's holders and waiters. */
  describe(name: string): Promise<DescribeResponse> {
    return this.#unary("describe", (m, o, cb) => this.#rpc.describe({ name }, m, o, cb));
  }

  /** One page of active locks. */
  list(request: ListRequest): Promise<ListResponse> {
    return this.#unary("list", (m, o, cb) => this.#rpc.list(request, m, o, cb));
  }

  /** Takes one holder's hold away, naming the operator (user@host) for the coordinator's log. */
  revoke(request: RevokeRequest): Promise<RevokeResponse> {
    return this.#unary("revoke", (m, o, cb) => {
      m.set(OPERATOR_METADATA, operatorName());
      return this.#rpc.revoke(request, m, o, cb);
    });
  }

  requestRelease(request: RequestReleaseRequest): Promise<RequestReleaseResponse> {
    return this.#unary("request release", (m, o, cb) => this.#rpc.requestRelease(request, m, o, cb));
  }

  /** Starts a Watch of one lock (a snapshot, then its changes). */
  watch(name: string): WatchStream {
    return new WatchStream(this.#rpc, name);
  }

  /** Closes the channel. */
  close(): void {
    this.#rpc.close();
  }

  #unary<T>(
    method: string,
    call: (
      metadata: Metadata,
      options: Partial<CallOptions>,
      callback: (err: ServiceError | null, response: T) => void,
    ) => unknown,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      const options = { deadline: new Date(Date.now() + this.#callTimeoutMs) };
      call(new Metadata(), options, (err, response) =>
        err ? reject(new AdminCallError(method, err, this.#secure)) : resolve(response),
      );
    });
  }
}

/** Who runs the command, as `user@host` (unverified: the coordinator logs it only when security is off). */
function operatorName(): string {
  let user = process.env.USER ?? "";
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for this uid (containers): $USER, or nothing.
  }
  return `${user || "unknown"}@${hostname()}`;
}
