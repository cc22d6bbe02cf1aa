import { type CallOptions, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { type CredentialOptions, channelCredentials, readableDetails, WatchStream } from "../client/admin.js";
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

// Unary calls fail fast on a refused connection; this bounds a coordinator that accepts and hangs.
const CALL_TIMEOUT_MS = 10_000;

/** A failed admin call: the gRPC status name and the server's details, for one line on stderr. */
export class AdminCallError extends Error {
  readonly code: number;

  constructor(method: string, err: ServiceError) {
    super(`${method} failed: ${status[err.code] ?? err.code} ${readableDetails(err.details)}`.trim(), { cause: err });
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

  /** Opens a channel to `server` (HOST:PORT); connects lazily on the first call. */
  constructor(server: string, connection: CredentialOptions = {}) {
    this.#rpc = new LockServiceClient(server, channelCredentials(connection));
  }

  /** One lock's holders and waiters. */
  describe(name: string): Promise<DescribeResponse> {
    return this.#unary("describe", (m, o, cb) => this.#rpc.describe({ name }, m, o, cb));
  }

  /** One page of active locks. */
  list(request: ListRequest): Promise<ListResponse> {
    return this.#unary("list", (m, o, cb) => this.#rpc.list(request, m, o, cb));
  }

  /** Takes one holder's hold away. */
  revoke(request: RevokeRequest): Promise<RevokeResponse> {
    return this.#unary("revoke", (m, o, cb) => this.#rpc.revoke(request, m, o, cb));
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
      const options = { deadline: new Date(Date.now() + CALL_TIMEOUT_MS) };
      call(new Metadata(), options, (err, response) =>
        err ? reject(new AdminCallError(method, err)) : resolve(response),
      );
    });
  }
}
