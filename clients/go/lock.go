package turnstile

import (
	"context"
	"errors"
	"time"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// holdKey is one holder of a session: (name, owner).
type holdKey struct{ name, owner string }

// Lock is one held lock (or semaphore permit, read or write hold, leadership). Done is closed —
// first, before anyone else can be granted the lock — when it must no longer be used: the
// coordinator said `lost`, the session ended, or the client's own lease clock ran out before a
// renewal was confirmed. Done is also closed by Release.
type Lock struct {
	name, owner string
	token       uint64
	proof       string
	session     *session
	acquireSent time.Time
	ctx         context.Context
	cancel      context.CancelCauseFunc

	// requests carries release requests to the holder (ReleaseRequests); buffered 1.
	requests chan ReleaseRequest

	// Guarded by session.mu.
	holds    uint32
	err      *Error // the loss, once lost
	released bool
	timer    *time.Timer
}

func newLock(s *session, key holdKey, token uint64, proof string, acquireSent time.Time) *Lock {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Lock{
		name: key.name, owner: key.owner, token: token, proof: proof, session: s, acquireSent: acquireSent,
		ctx: ctx, cancel: cancel, holds: 1, requests: make(chan ReleaseRequest, 1),
	}
}

// Name is the lock's name.
func (l *Lock) Name() string { return l.name }

// Owner is the re-entry key the lock is held under.
func (l *Lock) Owner() string { return l.owner }

// Token is the fencing token: strictly greater than every token granted on the name before.
// Pass it to what the lock protects and have that refuse smaller tokens.
func (l *Lock) Token() uint64 { return l.token }

// FencingProof is the grant's signed fencing proof: a compact JWS binding the lock name, Token and
// the holder, which resources verify with the fencing package (docs/fencing.md). A re-entry
// returns the same Lock, with its first grant's proof. "" when the coordinator runs without
// --fencing-key.
func (l *Lock) FencingProof() string { return l.proof }

// Done is closed when the lock is lost (Err says how) or released.
func (l *Lock) Done() <-chan struct{} { return l.ctx.Done() }

// Context is cancelled with Done; context.Cause says why (the loss's *Error, or
// context.Canceled after Release). Derive the contexts of work done under the lock from it.
func (l *Lock) Context() context.Context { return l.ctx }

// Err is nil while the lock is held (and after Release); once lost, an *Error with Reason lost,
// its LostReason and Token.
func (l *Lock) Err() error {
	l.session.mu.Lock()
	defer l.session.mu.Unlock()
	if l.err == nil {
		return nil
	}
	return l.err
}

// Valid reports whether the lease is still confirmed on the local clock right now. Check it
// just before each use of the protected resource: timers alone may fire late. A lock found past
// its deadline here is lost at once (Done closes, Err says lease-unconfirmed).
func (l *Lock) Valid() bool {
	s := l.session
	s.mu.Lock()
	if l.err != nil || l.released {
		s.mu.Unlock()
		return false
	}
	if time.Now().Before(s.clock.deadline(l.acquireSent)) {
		s.mu.Unlock()
		return true
	}
	l.lose(LostLeaseUnconfirmed)
	holds := l.holds
	s.mu.Unlock()
	s.releaseQuietly(l, holds)
	return false
}

// Deadline is the local lease deadline now: max(acquire sent, newest confirmed renewal) + ttl −
// margin. Each acknowledged keepalive moves it forward.
func (l *Lock) Deadline() time.Time {
	l.session.mu.Lock()
	defer l.session.mu.Unlock()
	return l.session.clock.deadline(l.acquireSent)
}

// HoldCount is the number of holds of this owner (re-entries raise it, Release drops one).
func (l *Lock) HoldCount() uint32 {
	l.session.mu.Lock()
	defer l.session.mu.Unlock()
	return l.holds
}

// Release drops one hold and waits (bounded by ctx) for the coordinator's answer; when it was
// the last, Done is closed first. Releasing again does nothing. A lock that was already lost
// returns its loss (*Error, Reason lost): whatever was done under it may not have been exclusive.
func (l *Lock) Release(ctx context.Context) error {
	s := l.session
	s.mu.Lock()
	if l.err != nil {
		s.mu.Unlock()
		return l.err
	}
	if l.released {
		s.mu.Unlock()
		return nil
	}
	var p *pending
	var stream pb.LockService_SessionClient
	var msg *pb.SessionRequest
	if s.ended == nil {
		// Registered (and checked: one the coordinator cannot take fails alone, the hold kept) before
		// the hold drops, both under mu.
		p, stream = s.pendingRelease(l)
		msg = &pb.SessionRequest{Kind: &pb.SessionRequest_Release{Release: p.release}}
		if err := s.client.checkRequest("release", l.name, msg); err != nil {
			delete(s.pending, p.release.RequestId)
			s.mu.Unlock()
			return err
		}
	}
	if l.holds <= 1 {
		l.stopTracking()
		l.released = true
		l.cancel(nil)
	} else {
		l.holds--
	}
	if p == nil {
		s.mu.Unlock()
		return nil // the coordinator releases everything of an ended session
	}
	s.mu.Unlock()
	// A write to a broken stream is no answer: a resume claims the hold and sends it again.
	_ = s.sendOn(stream, msg)
	err := s.awaitReply(ctx, p, l.name, "release")
	if errors.Is(err, ErrSessionEnded) {
		return nil // the session's holds are released (close) or run out (lease) without it
	}
	return err
}

// awaitReply waits for the answer of a release or proclaim: nil, the `failed` as an *Error, the
// session's end, or cancelled when ctx ends first.
func (s *session) awaitReply(ctx context.Context, p *pending, name, what string) error {
	select {
	case a := <-p.answer:
		if a.err != nil {
			return a.err
		}
		if failed := a.reply.GetFailed(); failed != nil {
			return errorFromFailed(failed)
		}
		return nil
	case <-ctx.Done():
		return &Error{Reason: ReasonCancelled, Name: name, Message: what + ": gave up waiting for the answer", Err: ctx.Err()}
	}
}

// arm (re)sets the lease timer to the current deadline; call with session.mu held.
func (l *Lock) arm() {
	if l.err != nil || l.released {
		return
	}
	wait := time.Until(l.session.clock.deadline(l.acquireSent))
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.checkLease)
	} else {
		l.timer.Reset(wait)
	}
}

// checkLease runs at the lease deadline: unless a newer ack moved it (then it re-arms), the lock
// is lost locally (told first) and a release is sent, best effort.
func (l *Lock) checkLease() {
	s := l.session
	s.mu.Lock()
	if l.err == nil && !l.released && time.Now().Before(s.clock.deadline(l.acquireSent)) {
		l.arm()
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	l.Valid()
}

// lose marks the lock lost and closes Done before anything else; call with session.mu held.
func (l *Lock) lose(reason LostReason) {
	if l.err != nil || l.released {
		return
	}
	l.err = lostError(l.name, l.token, reason)
	l.cancel(l.err)
	l.stopTracking()
}

// stopTracking ends lease judgement of the lock; call with session.mu held.
func (l *Lock) stopTracking() {
	if l.timer != nil {
		l.timer.Stop()
	}
	key := holdKey{l.name, l.owner}
	if l.session.held[key] == l {
		delete(l.session.held, key)
	}
}
