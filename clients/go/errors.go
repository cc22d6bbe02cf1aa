package turnstile

import (
	"fmt"
	"strings"
	"time"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// Reason is the closed set of reasons an *Error carries: the protocol's per-request failure
// reasons one to one, plus ReasonLost (a held lock is gone), ReasonSessionEnded (the session ended
// under a request) and ReasonConnection (no coordinator could be reached or the stream was refused).
type Reason string

// The reasons; docs/protocol.md, "Failure reasons", says when the server answers each.
const (
	ReasonInvalidArgument  Reason = "invalid-argument"
	ReasonTimeout          Reason = "timeout"
	ReasonCancelled        Reason = "cancelled"
	ReasonNotHeld          Reason = "not-held"
	ReasonDuplicateRequest Reason = "duplicate-request"
	ReasonLimit            Reason = "limit"
	ReasonConflict         Reason = "conflict"
	ReasonUnavailable      Reason = "unavailable"
	ReasonInternal         Reason = "internal"
	ReasonBusy             Reason = "busy"
	ReasonExpired          Reason = "expired"
	ReasonPermissionDenied Reason = "permission-denied"
	ReasonDeadlock         Reason = "deadlock"
	ReasonNotFound         Reason = "not-found"
	ReasonLost             Reason = "lost"
	ReasonSessionEnded     Reason = "session-ended"
	ReasonConnection       Reason = "connection"
)

// LostReason says how a held lock was lost: the server's word (expired, revoked, session-ended)
// or the client's own lease clock running out before a renewal was confirmed (lease-unconfirmed).
type LostReason string

// The ways a lock is lost.
const (
	LostExpired          LostReason = "expired"
	LostRevoked          LostReason = "revoked"
	LostSessionEnded     LostReason = "session-ended"
	LostLeaseUnconfirmed LostReason = "lease-unconfirmed"
)

// Sentinels for errors.Is: an *Error matches the sentinel of its Reason, e.g.
// errors.Is(err, turnstile.ErrTimeout).
var (
	ErrInvalidArgument  = &Error{Reason: ReasonInvalidArgument}
	ErrTimeout          = &Error{Reason: ReasonTimeout}
	ErrCancelled        = &Error{Reason: ReasonCancelled}
	ErrNotHeld          = &Error{Reason: ReasonNotHeld}
	ErrDuplicateRequest = &Error{Reason: ReasonDuplicateRequest}
	ErrLimit            = &Error{Reason: ReasonLimit}
	ErrConflict         = &Error{Reason: ReasonConflict}
	ErrUnavailable      = &Error{Reason: ReasonUnavailable}
	ErrInternal         = &Error{Reason: ReasonInternal}
	ErrBusy             = &Error{Reason: ReasonBusy}
	ErrExpired          = &Error{Reason: ReasonExpired}
	ErrPermissionDenied = &Error{Reason: ReasonPermissionDenied}
	ErrDeadlock         = &Error{Reason: ReasonDeadlock}
	ErrNotFound         = &Error{Reason: ReasonNotFound}
	ErrLost             = &Error{Reason: ReasonLost}
	ErrSessionEnded     = &Error{Reason: ReasonSessionEnded}
	ErrConnection       = &Error{Reason: ReasonConnection}
)

// Blocker is a holder an acquire waited behind when its wait ran out (Error.BlockedBy). Name is
// the lock it holds: set for the blockers of an AcquireAll set, which name several locks.
type Blocker struct {
	SessionID, Owner, ClientName, Identity, Name string
	HeldFor                                      time.Duration // on the store's clock
	FencingToken                                 uint64
}

// DeadlockStep is one waiter of a deadlock cycle (Error.DeadlockCycle): (SessionID, Owner) waits
// for the lock Name, which the next step's (SessionID, Owner) holds; the last step's lock is held
// by the first step's.
type DeadlockStep struct {
	SessionID, Owner, ClientName, RequestID, Name string
}

// Error is the one error type of this package. Reason is from a closed set; Name is the lock
// concerned ("" when none); BlockedBy names the holders a timed-out acquire waited behind;
// DeadlockCycle the cycle an acquire failed with ReasonDeadlock was chosen from, starting with it;
// LostReason and Token describe a lost lock. Err, when set, is the cause (a gRPC status error, or
// ctx.Err() for ReasonCancelled), reachable with errors.Is/As; Message already says what it said.
type Error struct {
	Reason    Reason
	Message   string
	Name      string
	BlockedBy []Blocker
	// DeadlockCycle is set for ReasonDeadlock (docs/deadlocks.md).
	DeadlockCycle []DeadlockStep
	LostReason    LostReason
	Token         uint64
	Err           error
}

// Error says what failed: the lock name (when there is one) and the message or reason.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("turnstile: ")
	if e.Name != "" {
		fmt.Fprintf(&b, "%q: ", e.Name)
	}
	if e.Message != "" {
		b.WriteString(e.Message)
	} else {
		b.WriteString(string(e.Reason))
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, turnstile.ErrBusy) true for every *Error with Reason busy.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Name == "" && t.Reason == e.Reason
}

// Retryable reports whether the same acquire may simply be tried again: the wait ran out, a
// try-once found the lock taken, the store was unreachable, a queue entry's lease ran out, or a
// grant was already lost when it arrived.
func (e *Error) Retryable() bool {
	switch e.Reason {
	case ReasonTimeout, ReasonBusy, ReasonUnavailable, ReasonExpired, ReasonLost:
		return true
	}
	return false
}

var failureReasons = map[pb.FailureReason]Reason{
	pb.FailureReason_FAILURE_REASON_INVALID_ARGUMENT:  ReasonInvalidArgument,
	pb.FailureReason_FAILURE_REASON_TIMEOUT:           ReasonTimeout,
	pb.FailureReason_FAILURE_REASON_CANCELLED:         ReasonCancelled,
	pb.FailureReason_FAILURE_REASON_NOT_HELD:          ReasonNotHeld,
	pb.FailureReason_FAILURE_REASON_DUPLICATE_REQUEST: ReasonDuplicateRequest,
	pb.FailureReason_FAILURE_REASON_LIMIT:             ReasonLimit,
	pb.FailureReason_FAILURE_REASON_CONFLICT:          ReasonConflict,
	pb.FailureReason_FAILURE_REASON_UNAVAILABLE:       ReasonUnavailable,
	pb.FailureReason_FAILURE_REASON_INTERNAL:          ReasonInternal,
	pb.FailureReason_FAILURE_REASON_BUSY:              ReasonBusy,
	pb.FailureReason_FAILURE_REASON_EXPIRED:           ReasonExpired,
	pb.FailureReason_FAILURE_REASON_PERMISSION_DENIED: ReasonPermissionDenied,
	pb.FailureReason_FAILURE_REASON_DEADLOCK:          ReasonDeadlock,
	pb.FailureReason_FAILURE_REASON_NOT_FOUND:         ReasonNotFound,
}

// errorFromFailed turns a `failed` answer into an *Error; an unknown reason from a newer server
// becomes internal.
func errorFromFailed(f *pb.Failed) *Error {
	reason, ok := failureReasons[f.GetReason()]
	if !ok {
		reason = ReasonInternal
	}
	e := &Error{Reason: reason, Message: f.GetMessage(), Name: f.GetName()}
	for _, b := range f.GetBlockedBy() {
		e.BlockedBy = append(e.BlockedBy, Blocker{
			SessionID: b.GetSessionId(), Owner: b.GetOwner(), ClientName: b.GetClientName(),
			Identity: b.GetIdentity(), Name: b.GetName(), HeldFor: b.GetHeldFor().AsDuration(), FencingToken: b.GetFencingToken(),
		})
	}
	for _, s := range f.GetDeadlockCycle() {
		e.DeadlockCycle = append(e.DeadlockCycle, DeadlockStep{
			SessionID: s.GetSessionId(), Owner: s.GetOwner(), ClientName: s.GetClientName(),
			RequestID: s.GetRequestId(), Name: s.GetName(),
		})
	}
	return e
}

func lostReasonOf(reason pb.LostReason) LostReason {
	switch reason {
	case pb.LostReason_LOST_REASON_REVOKED:
		return LostRevoked
	case pb.LostReason_LOST_REASON_SESSION_ENDED:
		return LostSessionEnded
	}
	// Expired, unspecified or unknown: the most conservative reading, the lock is simply gone.
	return LostExpired
}

func lostError(name string, token uint64, reason LostReason) *Error {
	return &Error{
		Reason: ReasonLost, Name: name, Token: token, LostReason: reason,
		Message: fmt.Sprintf("lock (token %d) lost: %s", token, reason),
	}
}
