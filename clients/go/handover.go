package turnstile

import (
	"context"
	"regexp"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// ReleaseRequest is someone asking the holder of a lock to let go (docs/elections.md): a session's
// RequestRelease (Requester "session <id>", SessionID set) or an operator's (`turnstile ask-release`,
// Requester "operator …"). Nothing is enforced: the holder decides.
type ReleaseRequest struct {
	Name, Owner, Requester, Reason string
	// SessionID is the asking session's id when a session asked (what HandOver takes), else "".
	SessionID string
}

// Successor is who holds a lock after Transfer: its session and owner, and its (higher) fencing token.
type Successor struct {
	SessionID, Owner string
	Token            uint64
}

var sessionRequester = regexp.MustCompile(`^session ([0-9a-f]+)$`)

func releaseRequestOf(r *pb.ReleaseRequested) ReleaseRequest {
	req := ReleaseRequest{Name: r.GetName(), Owner: r.GetOwner(), Requester: r.GetRequester(), Reason: r.GetReason()}
	if m := sessionRequester.FindStringSubmatch(req.Requester); m != nil {
		req.SessionID = m[1]
	}
	return req
}

// ReleaseRequests delivers the release requests made to this lock's holder while it holds. The channel
// holds one: a request that arrives while one is still unread is dropped (the holder was asked already).
func (l *Lock) ReleaseRequests() <-chan ReleaseRequest { return l.requests }

// onReleaseRequested hands a release request to the holder's Lock, if the session still holds it.
func (s *session) onReleaseRequested(r *pb.ReleaseRequested) {
	s.mu.Lock()
	lock := s.held[holdKey{r.GetName(), r.GetOwner()}]
	s.mu.Unlock()
	if lock == nil {
		return
	}
	select {
	case lock.requests <- releaseRequestOf(r):
	default:
	}
}

// Transfer hands this holder's exclusive hold (every hold count of it) to a waiting (session, owner) in
// one step (docs/elections.md): the successor holds with a new, higher token, the lock is never without
// a holder and no lock-delay applies. toSessionID "" is the head of the queue; toOwner "" that session's
// first waiter. Once the coordinator made the transfer, Done is closed (as after Release) and the
// successor is returned. It fails with ReasonNotFound (the message names who does wait), ReasonNotHeld,
// ReasonConflict (a shared hold) or the loss once lost. A transfer whose stream broke is sent again
// after a resume; if the first one had been made, that answers ReasonNotHeld (check Describe). Stop
// using the protected resource before calling it: the successor may act before Transfer returns, and
// its token fences this one's.
func (l *Lock) Transfer(ctx context.Context, toSessionID, toOwner string) (*Successor, error) {
	s := l.session
	s.mu.Lock()
	if l.err != nil {
		s.mu.Unlock()
		return nil, l.err
	}
	if l.released {
		s.mu.Unlock()
		return nil, &Error{Reason: ReasonNotHeld, Name: l.name, Message: "transfer: the lock was released"}
	}
	if s.ended != nil {
		s.mu.Unlock()
		return nil, s.ended
	}
	req := &pb.Transfer{RequestId: s.newRequestID(), Name: l.name, Owner: l.owner, ToSessionId: toSessionID, ToOwner: toOwner}
	msg := &pb.SessionRequest{Kind: &pb.SessionRequest_Transfer{Transfer: req}}
	if err := s.client.checkRequest("transfer", l.name, msg); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	p := &pending{answer: make(chan answer, 1), transfer: req}
	s.pending[req.RequestId] = p
	stream := s.stream
	s.mu.Unlock()
	_ = s.sendOn(stream, msg)
	reply, err := s.awaitAnswer(ctx, p, l.name, "transfer")
	if err != nil {
		return nil, err
	}
	t := reply.GetTransferred()
	s.mu.Lock()
	if l.err == nil && !l.released {
		l.stopTracking()
		l.released = true
		l.cancel(nil)
	}
	s.mu.Unlock()
	return &Successor{SessionID: t.GetToSessionId(), Owner: t.GetToOwner(), Token: t.GetFencingToken()}, nil
}

// awaitAnswer waits for the answer of a one-shot request: the reply, the `failed` as an *Error, the
// session's end, or cancelled when ctx ends first.
func (s *session) awaitAnswer(ctx context.Context, p *pending, name, what string) (*pb.SessionResponse, error) {
	select {
	case a := <-p.answer:
		if a.err != nil {
			return nil, a.err
		}
		if failed := a.reply.GetFailed(); failed != nil {
			return nil, errorFromFailed(failed)
		}
		return a.reply, nil
	case <-ctx.Done():
		return nil, &Error{Reason: ReasonCancelled, Name: name, Message: what + ": gave up waiting for the answer", Err: ctx.Err()}
	}
}

// RequestRelease asks every holder of name to let go, with reason (at most 256 bytes): each holder's
// client is told (Lock.ReleaseRequests); nothing is enforced. It returns how many holders were asked and
// fails with ReasonNotFound when nobody holds the lock.
func (c *Client) RequestRelease(ctx context.Context, name, reason string) (int, error) {
	s, err := c.session(ctx)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return 0, s.ended
	}
	req := &pb.RequestRelease{RequestId: s.newRequestID(), Name: name, Reason: reason}
	msg := &pb.SessionRequest{Kind: &pb.SessionRequest_RequestRelease{RequestRelease: req}}
	if err := s.client.checkRequest("request_release", name, msg); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	p := &pending{answer: make(chan answer, 1), requestRelease: req}
	s.pending[req.RequestId] = p
	stream := s.stream
	s.mu.Unlock()
	_ = s.sendOn(stream, msg)
	reply, err := s.awaitAnswer(ctx, p, name, "request release")
	if err != nil {
		return 0, err
	}
	return int(reply.GetReleaseRequestSent().GetHolders()), nil
}

// HandOver hands leadership to a waiting candidate in one step (see Lock.Transfer): toSessionID ""
// is the next candidate in line, else that session's candidate (a ReleaseRequest's SessionID). There
// is never a moment without a leader; the successor's token is higher.
func (l *Leadership) HandOver(ctx context.Context, toSessionID string) (*Successor, error) {
	return l.Transfer(ctx, toSessionID, "")
}

// askOnce wraps a campaign's OnQueued so that, the first time it is queued, the leader is asked to
// yield with reason (in the background: the campaign does not wait for it).
func (e *Election) askOnce(then func(uint32), reason string) func(uint32) {
	asked := false
	return func(position uint32) {
		if !asked {
			asked = true
			go func() { _, _ = e.client.RequestRelease(context.Background(), e.name, reason) }()
		}
		if then != nil {
			then(position)
		}
	}
}
