package turnstile

import (
	"context"
	"time"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// acquireSet sends one AcquireAll and waits for its answer, as acquire does for one lock: every
// lock of the set, in request order, or the error. A grant past its lease deadline when it
// arrived (a phantom) is lost, every lock of it, and never handed out.
func (s *session) acquireSet(ctx context.Context, req *pb.AcquireAll, wait time.Duration, giveUp time.Time, onQueued func(uint32)) ([]*Lock, error) {
	attempt := &acquireAttempt{set: req, onQueued: onQueued}
	a, err := s.submit(ctx, attempt, wait, giveUp)
	if err != nil {
		return nil, err
	}
	if a.err != nil {
		return nil, a.err
	}
	if failed := a.reply.GetFailed(); failed != nil {
		return nil, errorFromFailed(failed)
	}
	for _, lock := range a.locks {
		if err := lock.Err(); err != nil {
			return nil, err
		}
	}
	return a.locks, nil
}

// onAcquiredAll runs in the receive loop, so every Lock of the set is tracked before a `lost`
// right behind the grant. A set is never a re-entry (the coordinator refuses names its owner
// holds), so each lock is a new hold. A grant its caller gave up on is released, every lock.
func (s *session) onAcquiredAll(reply *pb.SessionResponse, all *pb.AcquiredAll) {
	s.mu.Lock()
	p := s.pending[all.GetRequestId()]
	delete(s.pending, all.GetRequestId())
	if p == nil || p.acquire == nil || p.acquire.set == nil {
		s.mu.Unlock()
		return
	}
	attempt := p.acquire
	owner := attempt.set.GetOwner()
	locks := make([]*Lock, 0, len(all.GetLocks()))
	for _, acquired := range all.GetLocks() {
		key := holdKey{acquired.GetName(), owner}
		lock := newLock(s, key, acquired.GetFencingToken(), acquired.GetFencingProof(), attempt.sentAt)
		s.held[key] = lock
		lock.arm()
		locks = append(locks, lock)
	}
	phantom := !time.Now().Before(s.clock.deadline(attempt.sentAt))
	abandoned := attempt.abandoned && !phantom
	for _, lock := range locks {
		switch {
		case phantom:
			lock.lose(LostLeaseUnconfirmed)
		case abandoned:
			lock.released = true
			lock.stopTracking()
			lock.cancel(nil)
		}
	}
	s.mu.Unlock()
	if phantom || abandoned {
		// The holds go back to the server; a phantom's caller sees the loss (acquireSet checks Err).
		for _, lock := range locks {
			s.releaseQuietly(lock, 1)
		}
	}
	if abandoned {
		p.answer <- answer{err: &Error{Reason: ReasonCancelled, Message: "acquire of the set: given up on before it was granted"}}
		return
	}
	p.answer <- answer{reply: reply, locks: locks}
}
