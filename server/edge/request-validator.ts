import type { Duration } from "../../gen/ts/google/protobuf/duration.js";
import {
  type Acquire,
  type AcquireAll,
  type ListRequest,
  LockMode,
  type Open,
  type Proclaim,
  type Release,
  type RequestRelease,
  type RequestReleaseRequest,
  type RevokeRequest,
  type Transfer,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { isNegativeOrMalformed, wholeMsFromDuration } from "../../wire/duration.js";
import { REQUEST_LIMITS } from "../../wire/request-limits.js";
import type { Limits } from "../config/limits.js";
import type {
  ValidAcquire,
  ValidAcquireAll,
  ValidOpen,
  ValidProclaim,
  ValidRelease,
  ValidRequestRelease,
  ValidTransfer,
} from "../engine/lock-requests.js";
import { ServerError } from "../engine/server-error.js";
import { isSessionId } from "../store/session-id.js";
import { MAX_SET_NAMES, type SetMember, type StoreMode } from "../store/store.js";

/** A ListRequest that passed validation; `pageSize` is the default when the request named none. */
export interface ValidList {
  prefix: string;
  pageSize: number;
  pageToken: string;
}

/** A RevokeRequest that passed validation: the hold of (session, owner) on `name`. */
export interface ValidRevoke {
  name: string;
  sessionId: string;
  owner: string;
}

// C0 and C1 control characters and DEL: they break logs and the store's record encoding.
const CONTROL = /\p{Cc}/u;
// Unpaired UTF-16 surrogates: stored as UTF-8 they would all become U+FFFD, one name for many.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Checks every field of client messages against the limits. Each check throws a ServerError
 * `invalid-argument` whose message names the field and the limit it broke.
 */
export class RequestValidator {
  constructor(private readonly limits: Limits) {}

  open(open: Open): ValidOpen {
    this.text("open.client_name", open.clientName, this.limits.maxIdBytes, true);
    if (open.held.length > this.limits.maxLocksPerSession) {
      throw invalid(
        `open.held: ${open.held.length} locks exceeds the maximum of ${this.limits.maxLocksPerSession} per session`,
      );
    }
    open.held.forEach((h, i) => {
      this.text(`open.held[${i}].name`, h.name, this.limits.maxNameBytes, false);
      this.text(`open.held[${i}].owner`, h.owner, this.limits.maxIdBytes, true);
    });
    if (open.resumeSessionId !== "") this.sessionId("open.resume_session_id", open.resumeSessionId);
    this.text("open.resume_secret", open.resumeSecret, this.limits.maxIdBytes, true);
    if (!open.ttl) return { clientName: open.clientName, ttlMs: this.limits.defaultTtlMs };
    const ttlMs = this.duration("open.ttl", open.ttl);
    const { minTtlMs, maxTtlMs } = this.limits;
    if (ttlMs < minTtlMs || ttlMs > maxTtlMs) {
      throw invalid(`open.ttl: ${ttlMs} ms is outside the allowed range ${minTtlMs}..${maxTtlMs} ms`);
    }
    return { clientName: open.clientName, ttlMs };
  }

  acquire(a: Acquire): ValidAcquire {
    this.requestId("acquire.request_id", a.requestId);
    this.text("acquire.name", a.name, this.limits.maxNameBytes, false);
    this.text("acquire.owner", a.owner, this.limits.maxIdBytes, true);
    const { mode, limit } = this.mode("acquire", a.mode, a.limit);
    const waitMs = this.wait("acquire.wait", a.wait);
    this.value("acquire.value", a.value);
    const lockDelayMs = a.lockDelay && this.lockDelay("acquire.lock_delay", a.lockDelay);
    const max = REQUEST_LIMITS.maxPriority;
    if (a.priority < 0 || a.priority > max) {
      throw invalid(`acquire.priority: ${a.priority} is outside the allowed range 0..${max}`);
    }
    return {
      requestId: a.requestId,
      name: a.name,
      owner: a.owner,
      mode,
      limit,
      waitMs,
      value: a.value,
      ...(lockDelayMs !== undefined && { lockDelayMs }),
      ...(a.priority > 0 && { priority: a.priority }),
    };
  }

  transfer(t: Transfer): ValidTransfer {
    this.requestId("transfer.request_id", t.requestId);
    this.text("transfer.name", t.name, this.limits.maxNameBytes, false);
    this.text("transfer.owner", t.owner, this.limits.maxIdBytes, true);
    if (t.toSessionId !== "") this.sessionId("transfer.to_session_id", t.toSessionId);
    this.text("transfer.to_owner", t.toOwner, this.limits.maxIdBytes, true);
    if (t.toSessionId === "" && t.toOwner !== "") {
      throw invalid("transfer.to_owner: must be empty when transfer.to_session_id is (the head of the queue)");
    }
    return { requestId: t.requestId, name: t.name, owner: t.owner, toSessionId: t.toSessionId, toOwner: t.toOwner };
  }

  requestRelease(r: RequestRelease): ValidRequestRelease {
    this.requestId("request_release.request_id", r.requestId);
    this.text("request_release.name", r.name, this.limits.maxNameBytes, false);
    this.text("request_release.reason", r.reason, REQUEST_LIMITS.maxReasonBytes, true);
    return { requestId: r.requestId, name: r.name, reason: r.reason };
  }

  /** An operator's RequestRelease (the admin call): the name and the reason. */
  requestReleaseCall(r: RequestReleaseRequest): { name: string; reason: string } {
    this.text("request_release.name", r.name, this.limits.maxNameBytes, false);
    this.text("request_release.reason", r.reason, REQUEST_LIMITS.maxReasonBytes, true);
    return { name: r.name, reason: r.reason };
  }

  acquireAll(a: AcquireAll): ValidAcquireAll {
    this.requestId("acquire_all.request_id", a.requestId);
    if (a.locks.length === 0) throw invalid(`acquire_all.locks: must not be empty (name 1 to ${MAX_SET_NAMES} locks)`);
    if (a.locks.length > MAX_SET_NAMES) {
      throw invalid(`acquire_all.locks: ${a.locks.length} locks exceeds the maximum of ${MAX_SET_NAMES} per set`);
    }
    const seen = new Map<string, number>();
    const locks = a.locks.map((l, i): SetMember => {
      const field = `acquire_all.locks[${i}]`;
      const first = seen.get(l.name);
      if (first !== undefined) throw invalid(`${field}.name: "${l.name}" is named twice (also locks[${first}])`);
      seen.set(l.name, i);
      this.text(`${field}.name`, l.name, this.limits.maxNameBytes, false);
      return { name: l.name, ...this.mode(field, l.mode, l.limit) };
    });
    this.text("acquire_all.owner", a.owner, this.limits.maxIdBytes, true);
    this.value("acquire_all.value", a.value);
    const waitMs = this.wait("acquire_all.wait", a.wait);
    const lockDelayMs = a.lockDelay && this.lockDelay("acquire_all.lock_delay", a.lockDelay);
    return {
      requestId: a.requestId,
      locks,
      owner: a.owner,
      waitMs,
      value: a.value,
      ...(lockDelayMs !== undefined && { lockDelayMs }),
    };
  }

  release(r: Release): ValidRelease {
    this.requestId("release.request_id", r.requestId);
    this.text("release.name", r.name, this.limits.maxNameBytes, false);
    this.text("release.owner", r.owner, this.limits.maxIdBytes, true);
    return { requestId: r.requestId, name: r.name, owner: r.owner };
  }

  proclaim(p: Proclaim): ValidProclaim {
    this.requestId("proclaim.request_id", p.requestId);
    this.text("proclaim.name", p.name, this.limits.maxNameBytes, false);
    this.text("proclaim.owner", p.owner, this.limits.maxIdBytes, true);
    this.value("proclaim.value", p.value);
    return { requestId: p.requestId, name: p.name, owner: p.owner, value: p.value };
  }

  list(l: ListRequest): ValidList {
    this.text("list.prefix", l.prefix, this.limits.maxNameBytes, true);
    const { maxListPageSize, defaultListPageSize } = this.limits;
    if (l.pageSize > maxListPageSize) {
      throw invalid(`list.page_size: ${l.pageSize} exceeds the maximum of ${maxListPageSize}`);
    }
    return { prefix: l.prefix, pageSize: l.pageSize === 0 ? defaultListPageSize : l.pageSize, pageToken: l.pageToken };
  }

  revoke(r: RevokeRequest): ValidRevoke {
    this.text("revoke.name", r.name, this.limits.maxNameBytes, false);
    this.sessionId("revoke.session_id", r.sessionId);
    this.text("revoke.owner", r.owner, this.limits.maxIdBytes, true);
    return { name: r.name, sessionId: r.sessionId, owner: r.owner };
  }

  /** Validates a lock name (`field` names it in the error) and returns it. */
  name(field: string, name: string): string {
    this.text(field, name, this.limits.maxNameBytes, false);
    return name;
  }

  /** Validates a request id (non-empty, bounded, printable). */
  requestId(field: string, id: string): void {
    this.text(field, id, this.limits.maxIdBytes, false);
  }

  /** The mode and limit of a claim (`field`.mode, `field`.limit in errors); the limit is 0 for EXCLUSIVE. */
  private mode(field: string, wire: LockMode, limit: number): { mode: StoreMode; limit: number } {
    if (!(wire in LockMode) || wire === LockMode.UNRECOGNIZED) {
      throw invalid(`${field}.mode: unknown value ${wire} (expected EXCLUSIVE or SHARED)`);
    }
    const mode: StoreMode = wire === LockMode.LOCK_MODE_SHARED ? "shared" : "exclusive";
    if (mode === "shared" && limit > this.limits.maxSharedLimit) {
      throw invalid(`${field}.limit: ${limit} exceeds the maximum of ${this.limits.maxSharedLimit}`);
    }
    if (mode === "exclusive" && limit !== 0) {
      throw invalid(`${field}.limit: must be 0 for EXCLUSIVE locks (got ${limit})`);
    }
    return { mode, limit: mode === "shared" ? limit : 0 };
  }

  /** A wait: undefined (absent) waits forever; at most maxWaitMs. */
  private wait(field: string, d: Duration | undefined): number | undefined {
    if (!d) return undefined;
    const waitMs = this.duration(field, d);
    if (waitMs > this.limits.maxWaitMs) {
      throw invalid(
        `${field}: ${waitMs} ms exceeds the maximum of ${this.limits.maxWaitMs} ms (omit it to wait forever)`,
      );
    }
    return waitMs;
  }

  /** Session ids come from this server only: anything else (a ":" above all) could alias another hold. */
  private sessionId(field: string, id: string): void {
    if (id.length === 0) throw invalid(`${field}: must not be empty`);
    if (!isSessionId(id)) throw invalid(`${field}: not a session id (32 lowercase hex digits, as Describe shows them)`);
  }

  private text(field: string, value: string, maxBytes: number, mayBeEmpty: boolean): void {
    if (!mayBeEmpty && value.length === 0) throw invalid(`${field}: must not be empty`);
    const bytes = Buffer.byteLength(value, "utf8");
    if (bytes > maxBytes) throw invalid(`${field}: ${bytes} bytes exceeds the maximum of ${maxBytes} bytes`);
    if (CONTROL.test(value)) throw invalid(`${field}: must not contain control characters`);
    // Only strings from JSON or URLs (the console) can hold one; UTF-8 cannot encode it.
    if (LONE_SURROGATE.test(value)) throw invalid(`${field}: not valid UTF-8 (a lone surrogate)`);
  }

  private value(field: string, value: Uint8Array): void {
    if (value.length > this.limits.maxValueBytes) {
      throw invalid(`${field}: ${value.length} bytes exceeds the maximum of ${this.limits.maxValueBytes} bytes`);
    }
  }

  private lockDelay(field: string, d: Duration): number {
    const ms = this.duration(field, d);
    const max = REQUEST_LIMITS.maxLockDelayMs;
    if (ms > max) throw invalid(`${field}: ${ms} ms exceeds the maximum lock-delay of ${max} ms`);
    return ms;
  }

  private duration(field: string, d: Duration): number {
    if (isNegativeOrMalformed(d)) throw invalid(`${field}: must be a non-negative duration`);
    return wholeMsFromDuration(d);
  }
}

function invalid(message: string): ServerError {
  return new ServerError("invalid-argument", message);
}
