package turnstile

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// cancelGrace bounds how long an acquire whose ctx is done waits for the coordinator to confirm
// the cancel (or for a grant that raced it to be handed back) before it returns anyway.
const cancelGrace = 5 * time.Second

// acquireAttempt is an acquire in flight: the request (an Acquire, or an AcquireAll set; sent
// again on resume), when it was first sent, until when it may wait (zero: forever), and whether
// its caller gave up.
type acquireAttempt struct {
	key       holdKey
	request   *pb.Acquire
	set       *pb.AcquireAll
	sentAt    time.Time
	waitUntil time.Time
	abandoned bool
	onQueued  func(uint32)
}

// acquire sends one acquire and waits for its answer. wait < 0: no server-side bound. Unanswered
// at giveUp (zero: never) it is withdrawn and fails with a timeout (withdraw).
func (s *session) acquire(ctx context.Context, req *pb.Acquire, wait time.Duration, giveUp time.Time, onQueued func(uint32)) (*Lock, error) {
	attempt := &acquireAttempt{key: holdKey{req.Name, req.Owner}, request: req, onQueued: onQueued}
	a, err := s.submit(ctx, attempt, wait, giveUp)
	if err != nil {
		return nil, err
	}
	return granted(a)
}

// submit registers attempt under a fresh request id, sends it and waits for its answer: until
// giveUp (then it is withdrawn: a timeout) or until ctx is done (then it is cancelled, and a grant
// that raced the cancel is handed back, every lock of it).
func (s *session) submit(ctx context.Context, attempt *acquireAttempt, wait time.Duration, giveUp time.Time) (answer, error) {
	if wait >= 0 {
		attempt.setWait(durationpb.New(wait))
	}
	p := &pending{answer: make(chan answer, 1), acquire: attempt}
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return answer{}, s.ended
	}
	requestID := s.newRequestID()
	attempt.setRequestID(requestID)
	msg := attempt.message()
	// One the coordinator cannot take would end the session: this call fails alone, nothing sent.
	if err := s.client.checkRequest(attempt.field(), attempt.name(), msg); err != nil {
		s.mu.Unlock()
		return answer{}, err
	}
	s.pending[requestID] = p
	// Measured before the write, so the lease is judged from no later than the real send.
	attempt.sentAt = time.Now()
	if wait >= 0 {
		attempt.waitUntil = attempt.sentAt.Add(wait)
	}
	stream := s.stream
	s.mu.Unlock()
	// A write to a broken stream is no answer: a resume sends the pending acquire again.
	_ = s.sendOn(stream, msg)
	var deadline <-chan time.Time // nil (never) without a finite wait
	if !giveUp.IsZero() {
		timer := time.NewTimer(time.Until(giveUp))
		defer timer.Stop()
		deadline = timer.C
	}
	select {
	case a := <-p.answer:
		return a, nil
	case <-deadline:
		return s.withdraw(p, wait)
	case <-ctx.Done():
	}
	s.mu.Lock()
	attempt.abandoned = true
	s.mu.Unlock()
	_ = s.send(cancelRequest(requestID))
	// Wait for the cancel's answer, so the request is gone from the queue when this returns; a
	// grant that raced it is handed back by onAcquired.
	timer := time.NewTimer(cancelGrace)
	defer timer.Stop()
	select {
	case a := <-p.answer:
		// Granted before the cancel was marked: hand it back, every lock of a set.
		releaseCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
		for _, lock := range a.all() {
			_ = lock.Release(releaseCtx)
		}
		stop()
	case <-timer.C:
	case <-deadline: // the client's own bound holds for a cancelled acquire too
	case <-s.done:
	}
	return answer{}, &Error{Reason: ReasonCancelled, Name: attempt.name(), Message: attempt.kind() + ": " + ctx.Err().Error(), Err: ctx.Err()}
}

// granted turns an acquire's answer into its Lock or error; a grant already past its lease
// deadline when it arrived (a phantom) is lost, never handed out.
func granted(a answer) (*Lock, error) {
	if a.err != nil {
		return nil, a.err
	}
	if failed := a.reply.GetFailed(); failed != nil {
		return nil, errorFromFailed(failed)
	}
	if err := a.lock.Err(); err != nil {
		return nil, err
	}
	return a.lock, nil
}

// onAcquired runs in the receive loop, so the Lock is tracked before a `lost` right behind it.
func (s *session) onAcquired(reply *pb.SessionResponse, acquired *pb.Acquired) {
	s.mu.Lock()
	p := s.pending[acquired.GetRequestId()]
	delete(s.pending, acquired.GetRequestId())
	if p == nil || p.acquire == nil {
		s.mu.Unlock()
		return
	}
	attempt := p.acquire
	token := acquired.GetFencingToken()
	lock := s.held[attempt.key]
	reentry := lock != nil && lock.token == token
	if reentry {
		lock.holds++ // same hold, one more count
	} else {
		lock = newLock(s, attempt.key, token, acquired.GetFencingProof(), attempt.sentAt)
		s.held[attempt.key] = lock
		lock.arm()
	}
	phantom := !time.Now().Before(s.clock.deadline(attempt.sentAt))
	abandoned := attempt.abandoned && !phantom
	switch {
	case phantom:
		lock.lose(LostLeaseUnconfirmed)
	case abandoned && reentry:
		lock.holds--
	case abandoned:
		lock.released = true
		lock.stopTracking()
		lock.cancel(nil)
	}
	holds := lock.holds
	s.mu.Unlock()
	switch {
	case phantom:
		// The caller sees the loss (granted checks Err); the hold goes back to the server.
		s.releaseQuietly(lock, holds)
		p.answer <- answer{reply: reply, lock: lock}
	case abandoned:
		s.releaseQuietly(lock, 1)
		p.answer <- answer{err: &Error{Reason: ReasonCancelled, Name: lock.name}}
	default:
		p.answer <- answer{reply: reply, lock: lock}
	}
}

func (s *session) onQueued(queued *pb.Queued) {
	s.mu.Lock()
	p := s.pending[queued.GetRequestId()]
	s.mu.Unlock()
	if p != nil && p.acquire != nil && p.acquire.onQueued != nil {
		p.acquire.onQueued(queued.GetPosition())
	}
}

// onLost applies a server-reported `lost` to the matching hold.
func (s *session) onLost(lost *pb.Lost) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lock := s.held[holdKey{lost.GetName(), lost.GetOwner()}]
	if lock != nil && lock.token == lost.GetFencingToken() {
		lock.lose(lostReasonOf(lost.GetReason()))
	}
}

// releaseQuietly sends n releases of lock's hold that nobody waits for (a lease judged lost, a
// grant given up on); each is claimed on resume while in flight.
func (s *session) releaseQuietly(lock *Lock, n uint32) {
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return
	}
	var requests []*pb.SessionRequest
	for range max(n, 1) {
		p, _ := s.pendingRelease(lock)
		requests = append(requests, &pb.SessionRequest{Kind: &pb.SessionRequest_Release{Release: p.release}})
	}
	stream := s.stream
	s.mu.Unlock()
	for _, req := range requests {
		_ = s.sendOn(stream, req)
	}
}

// pendingRelease registers a release of lock's hold and returns it with the stream to send it
// on; call with mu held.
func (s *session) pendingRelease(lock *Lock) (*pending, pb.LockService_SessionClient) {
	requestID := s.newRequestID()
	p := &pending{
		answer:  make(chan answer, 1),
		release: &pb.Release{RequestId: requestID, Name: lock.name, Owner: lock.owner}, releasing: lock,
	}
	s.pending[requestID] = p
	return p, s.stream
}
