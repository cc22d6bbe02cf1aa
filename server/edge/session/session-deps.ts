import type { status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Limits } from "../../config/limits.js";
import type { SessionKeeper } from "../../engine/lifecycle/session-keeper.js";
import type { HandOvers } from "../../engine/locks/hand-overs.js";
import type { HoldChanges } from "../../engine/locks/hold-changes.js";
import type { LockTable } from "../../engine/locks/lock-table.js";
import type { Authorizer } from "../../security/authorizer.js";
import type { FencingSigner } from "../../security/fencing/fencing-signer.js";
import type { SessionTraces } from "../../tracing/session-tracer.js";
import type { RequestValidator } from "../request-validator.js";
import type { OpenIntake } from "./open-intake.js";
import type { SessionSlots } from "./session-slots.js";
import type { StoreAdmission } from "./store-admission.js";

/**
 * The stream serving an open session, as the coordinator's session map holds it (a SessionStream):
 * a resume of the session on another stream detaches it.
 */
export interface AttachedStream {
  /** Moves the session off this stream without touching the store, then ends the stream with `code`. */
  detach(code: status, details: string): void;
}

/** What every session stream of one coordinator shares. */
export interface SessionDeps {
  table: LockTable;
  holds: HoldChanges;
  /** Transfer and release requests (docs/elections.md). */
  handOvers: HandOvers;
  keeper: SessionKeeper;
  validator: RequestValidator;
  limits: Limits;
  log: Logger;
  /** Open sessions of this coordinator by session id (session limit, takeover, drain). */
  sessions: Map<string, AttachedStream>;
  /** The session limit over `sessions` and the Opens in flight. */
  slots: SessionSlots;
  /** Set when tracing is on. */
  traces?: SessionTraces;
  /** Bounds store work of client requests per session and coordinator, fairly between sessions. */
  admission: StoreAdmission;
  /** Bounds streams that have not sent Open yet (count and deadline). */
  intake: OpenIntake;
  /** Who may lock what (Authorizer.OPEN when security is off). */
  guard: Authorizer;
  /** Signs each grant's fencing proof (`serve --fencing-key`); absent: grants carry no proof. */
  fencing?: FencingSigner;
}
