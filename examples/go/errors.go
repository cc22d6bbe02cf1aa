package main

import (
	"fmt"

	pb "turnstile/examples/go/gen/turnstile/v1"
)

// FailedError is a `failed` answer to one request; the session stays open.
type FailedError struct {
	Reason  pb.FailureReason
	Message string
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%s: %s", e.Reason, e.Message)
}

// Retryable reports whether the same acquire may simply be sent again: the wait ran out, a
// try-once found the lock taken, the store was unreachable, or the queue entry's lease ran out.
func (e *FailedError) Retryable() bool {
	switch e.Reason {
	case pb.FailureReason_FAILURE_REASON_TIMEOUT, pb.FailureReason_FAILURE_REASON_BUSY,
		pb.FailureReason_FAILURE_REASON_UNAVAILABLE, pb.FailureReason_FAILURE_REASON_EXPIRED:
		return true
	}
	return false
}

// Why a held lock is gone. The server-reported reasons mirror pb.LostReason; LostUnconfirmed is
// the client's own judgement that the lease could not be confirmed in time.
const (
	LostUnconfirmed   = "lease-unconfirmed"
	LostExpired       = "expired"
	LostRevoked       = "revoked"
	LostSessionEnded  = "session-ended"
	lostReasonUnknown = "unknown"
)

func lostReasonOf(reason pb.LostReason) string {
	switch reason {
	case pb.LostReason_LOST_REASON_EXPIRED:
		return LostExpired
	case pb.LostReason_LOST_REASON_REVOKED:
		return LostRevoked
	case pb.LostReason_LOST_REASON_SESSION_ENDED:
		return LostSessionEnded
	}
	return lostReasonUnknown
}

// LostError says a lock was lost (before or while it was used).
type LostError struct {
	Name   string
	Token  uint64
	Reason string
}

func (e *LostError) Error() string {
	return fmt.Sprintf("lock %q (token %d) lost: %s", e.Name, e.Token, e.Reason)
}
