package main

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	pb "turnstile/examples/go/gen/turnstile/v1"
)

// WaitForever as an Acquire wait sends no `wait`: the request waits until granted or cancelled.
const WaitForever time.Duration = -1

// released marks a Lock given back by Release (not lost: Lost() stays open).
const released = "released"

// holdKey is one holder of a session: (name, owner).
type holdKey struct{ name, owner string }

// acquireAttempt is an acquire in flight: the request (sent again on resume), when it was first
// sent, until when it may wait (zero: forever), and whether its caller gave up.
type acquireAttempt struct {
	key       holdKey
	request   *pb.Acquire
	sentAt    time.Time
	waitUntil time.Time
	abandoned bool
}

// Lock is one held lock. Lost() is closed as soon as the lock must no longer be used: the
// server said `lost`, the session ended, or the lease could not be confirmed locally in time.
type Lock struct {
	Name, Owner string
	Token       uint64

	session     *Session
	acquireSent time.Time
	lost        chan struct{}
	lostReason  string // guarded by session.mu; set before lost is closed
	timer       *time.Timer
}

// Lost is closed when the lock is lost; LostReason then says why.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// LostReason is "" while the lock is held, then one of the Lost* reasons ("released" after Release).
func (l *Lock) LostReason() string {
	l.session.mu.Lock()
	defer l.session.mu.Unlock()
	return l.lostReason
}

// Valid reports whether the lease is still confirmed on the local clock right now. Check it
// just before every use of the protected resource; timers alone may fire late.
func (l *Lock) Valid() bool {
	l.session.mu.Lock()
	defer l.session.mu.Unlock()
	return l.lostReason == "" && time.Now().Before(l.session.clock.deadline(l.acquireSent))
}

// Acquire asks for an exclusive lock and waits for `acquired` or `failed` (a *FailedError).
// wait bounds the server-side wait (0 tries once, WaitForever never times out); cancelling ctx
// sends `cancel` and releases a grant that raced it.
func (s *Session) Acquire(ctx context.Context, name, owner string, wait time.Duration) (*Lock, error) {
	req := &pb.Acquire{Name: name, Owner: owner, Mode: pb.LockMode_LOCK_MODE_EXCLUSIVE}
	if wait >= 0 {
		req.Wait = durationpb.New(wait)
	}
	attempt := &acquireAttempt{key: holdKey{name, owner}, request: req}
	p := &pendingRequest{answer: make(chan answer, 1), acquire: attempt}
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return nil, s.ended
	}
	req.RequestId = s.newRequestID()
	s.pending[req.RequestId] = p
	// Measured before the write, so the lease is judged from no later than the real send.
	attempt.sentAt = time.Now()
	if wait >= 0 {
		attempt.waitUntil = attempt.sentAt.Add(wait)
	}
	stream := s.stream
	s.mu.Unlock()
	// A write to a broken stream is not an answer: a resume sends the pending acquire again.
	_ = s.sendOn(stream, &pb.SessionRequest{Kind: &pb.SessionRequest_Acquire{Acquire: req}})
	select {
	case a := <-p.answer:
		if a.err != nil {
			return nil, a.err
		}
		if failed := a.reply.GetFailed(); failed != nil {
			return nil, &FailedError{Reason: failed.GetReason(), Message: failed.GetMessage()}
		}
		if !a.lock.Valid() {
			return nil, &LostError{Name: name, Token: a.lock.Token, Reason: a.lock.LostReason()}
		}
		return a.lock, nil
	case <-ctx.Done():
		s.mu.Lock()
		attempt.abandoned = true
		s.mu.Unlock()
		cancel := &pb.Cancel{RequestId: req.RequestId}
		_ = s.send(&pb.SessionRequest{Kind: &pb.SessionRequest_Cancel{Cancel: cancel}})
		go func() {
			// A grant already on its way when we gave up: hand it straight back.
			if a := <-p.answer; a.lock != nil {
				_ = a.lock.Release(context.Background())
			}
		}()
		return nil, ctx.Err()
	}
}

// Release drops this hold and waits for `released`; a second call does nothing. Releasing a
// lock that was already lost returns a *LostError; a NOT_HELD answer comes back as *FailedError.
func (l *Lock) Release(ctx context.Context) error {
	s := l.session
	s.mu.Lock()
	if l.lostReason == released {
		s.mu.Unlock()
		return nil
	}
	if l.lostReason != "" {
		reason := l.lostReason
		s.mu.Unlock()
		return &LostError{Name: l.Name, Token: l.Token, Reason: reason}
	}
	l.stopTracking(released)
	if s.ended != nil {
		s.mu.Unlock()
		return s.ended
	}
	p, stream := s.pendingRelease(l)
	s.mu.Unlock()
	// A write to a broken stream is not an answer: a resume claims the hold and sends it again.
	_ = s.sendOn(stream, &pb.SessionRequest{Kind: &pb.SessionRequest_Release{Release: p.release}})
	select {
	case a := <-p.answer:
		if a.err != nil {
			return a.err
		}
		if failed := a.reply.GetFailed(); failed != nil {
			return &FailedError{Reason: failed.GetReason(), Message: failed.GetMessage()}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onAcquired runs in the receive loop, so the Lock is tracked before a `lost` right behind it.
func (s *Session) onAcquired(reply *pb.SessionResponse, acquired *pb.Acquired) {
	s.mu.Lock()
	p := s.pending[acquired.GetRequestId()]
	delete(s.pending, acquired.GetRequestId())
	if p == nil || p.acquire == nil {
		s.mu.Unlock()
		return
	}
	if p.acquire.abandoned {
		s.mu.Unlock()
		s.releaseQuietly(p.acquire.key, acquired.GetFencingToken())
		return
	}
	lock := &Lock{
		Name: acquired.GetName(), Owner: p.acquire.key.owner, Token: acquired.GetFencingToken(),
		session: s, acquireSent: p.acquire.sentAt, lost: make(chan struct{}),
	}
	s.held[p.acquire.key] = lock
	lock.arm()
	s.mu.Unlock()
	p.answer <- answer{reply: reply, lock: lock}
}

// onLost applies a server-reported `lost` to the matching hold.
func (s *Session) onLost(lost *pb.Lost) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lock := s.held[holdKey{lost.GetName(), lost.GetOwner()}]
	if lock != nil && lock.Token == lost.GetFencingToken() {
		lock.lose(lostReasonOf(lost.GetReason()))
	}
}

// releaseQuietly sends a release nobody waits for (a lease judged lost, a grant given up on);
// token is the hold's fencing token, for the claim a resume makes while it is in flight.
func (s *Session) releaseQuietly(key holdKey, token uint64) {
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return
	}
	p, stream := s.pendingRelease(&Lock{Name: key.name, Owner: key.owner, Token: token})
	s.mu.Unlock()
	_ = s.sendOn(stream, &pb.SessionRequest{Kind: &pb.SessionRequest_Release{Release: p.release}})
}

// pendingRelease registers a release of lock's hold and returns it with the stream to send it on;
// call with mu held.
func (s *Session) pendingRelease(lock *Lock) (*pendingRequest, pb.LockService_SessionClient) {
	requestID := s.newRequestID()
	p := &pendingRequest{
		answer:  make(chan answer, 1),
		release: &pb.Release{RequestId: requestID, Name: lock.Name, Owner: lock.Owner}, releasing: lock,
	}
	s.pending[requestID] = p
	return p, s.stream
}

// arm (re)sets the lease timer to the current deadline; call with session.mu held.
func (l *Lock) arm() {
	if l.lostReason != "" {
		return
	}
	wait := time.Until(l.session.clock.deadline(l.acquireSent))
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.checkLease)
	} else {
		l.timer.Reset(wait)
	}
}

// checkLease runs at the lease deadline: unless a newer ack moved it, the lock is lost locally.
func (l *Lock) checkLease() {
	s := l.session
	s.mu.Lock()
	if l.lostReason != "" {
		s.mu.Unlock()
		return
	}
	if time.Now().Before(s.clock.deadline(l.acquireSent)) {
		l.arm()
		s.mu.Unlock()
		return
	}
	l.lose(LostUnconfirmed)
	s.mu.Unlock()
	s.releaseQuietly(holdKey{l.Name, l.Owner}, l.Token)
}

// lose marks the lock lost for reason and closes Lost(); call with session.mu held.
func (l *Lock) lose(reason string) {
	if l.lostReason != "" {
		return
	}
	l.stopTracking(reason)
	close(l.lost)
}

// stopTracking ends lease judgement of the lock; call with session.mu held.
func (l *Lock) stopTracking(reason string) {
	l.lostReason = reason
	if l.timer != nil {
		l.timer.Stop()
	}
	key := holdKey{l.Name, l.Owner}
	if l.session.held[key] == l {
		delete(l.session.held, key)
	}
}
