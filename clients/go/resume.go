package turnstile

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// How long one open or resume attempt may take, and the backoff between failed resume attempts.
const (
	openTimeout  = 5 * time.Second
	firstBackoff = 50 * time.Millisecond
	maxBackoff   = time.Second
)

// openedStream is a Session stream that was answered `opened`.
type openedStream struct {
	stream pb.LockService_SessionClient
	cancel context.CancelFunc
	opened *pb.Opened
	sentAt time.Time // just before the `open` was written: what its renewal counts from
}

// openStream starts a Session stream (a child of root, which outlives ctx) on stub, sends open
// and waits, bounded by ctx and openTimeout, for `opened`.
func openStream(parent, root context.Context, stub pb.LockServiceClient, open *pb.Open) (*openedStream, error) {
	ctx, stop := context.WithTimeout(parent, openTimeout)
	defer stop()
	streamCtx, cancel := context.WithCancel(root)
	// Until `opened` the open's bound is the stream's too: starting the stream waits for the
	// transport, which a coordinator that accepts TCP and never answers never makes ready.
	unbind := context.AfterFunc(ctx, cancel)
	stream, err := stub.Session(streamCtx)
	if err != nil {
		cancel()
		return nil, openFailed(parent, ctx, err)
	}
	sentAt := time.Now()
	if err := stream.Send(&pb.SessionRequest{Kind: &pb.SessionRequest_Open{Open: open}}); err != nil {
		_, err = stream.Recv() // the stream's status says why the write failed
		cancel()
		return nil, openFailed(parent, ctx, err)
	}
	first := make(chan error, 1)
	var reply *pb.SessionResponse
	go func() {
		var err error
		reply, err = stream.Recv()
		first <- err
	}()
	select {
	case err := <-first:
		if err != nil {
			cancel()
			return nil, err
		}
		if reply.GetOpened() == nil {
			cancel()
			return nil, fmt.Errorf("open: expected opened, got %v", reply)
		}
		if !unbind() { // the bound ran out as `opened` arrived: the stream is cancelled
			cancel()
			return nil, openFailed(parent, ctx, ctx.Err())
		}
		return &openedStream{stream: stream, cancel: cancel, opened: reply.GetOpened(), sentAt: sentAt}, nil
	case <-ctx.Done():
		cancel()
		<-first // the Recv ends with the stream: no goroutine is left behind
		return nil, openFailed(parent, ctx, ctx.Err())
	}
}

// errNoAnswer is the cause of an open that ran into openTimeout: the coordinator accepted (or is
// still connecting) but did not answer `opened` in time.
var errNoAnswer = fmt.Errorf("did not answer the session's open within %s (coordinator stopped, blackholed, or not a Turnstile coordinator)", openTimeout)

// openFailed is err, or errNoAnswer when the open's own bound (openTimeout) ran out, not the caller's.
func openFailed(parent, ctx context.Context, err error) error {
	if ctx.Err() != nil && parent.Err() == nil {
		return errNoAnswer
	}
	return err
}

// resumable reports whether a stream that ended with err may go on as the same session on
// another stream: UNAVAILABLE is a coordinator draining or unreachable.
func resumable(err error) bool {
	return status.Code(err) == codes.Unavailable
}

// resume reopens the session on the coordinators in turn (the next address first), with
// backoff, until one answers `opened{resumed}` or the lease runs out; it returns the new stream,
// or nil once the session ended. Held locks stay valid by their local lease meanwhile.
func (s *session) resume(cause error) pb.LockService_SessionClient {
	c := s.client
	c.emit(Event{Kind: EventReconnecting, SessionID: s.id, Err: cause})
	backoff := firstBackoff
	for {
		s.mu.Lock()
		if s.ended != nil {
			s.mu.Unlock()
			return nil
		}
		sessionEnd := s.clock.sessionEnd()
		s.address = (s.address + 1) % len(c.stubs)
		address := s.address
		open := &pb.Open{
			ClientName: c.opts.ClientName, Ttl: durationpb.New(s.clock.ttl),
			ResumeSessionId: s.id, ResumeSecret: s.secret, Held: s.claims(),
		}
		s.mu.Unlock()
		if !time.Now().Before(sessionEnd) {
			s.expire(sessionEndedError("the lease ran out while resuming", cause))
			return nil
		}
		o, err := openStream(s.root, s.root, c.stubs[address], open)
		if err == nil && (!o.opened.GetResumed() || o.opened.GetSessionId() != s.id) {
			o.cancel()
			err = fmt.Errorf("resume answered with another session %s", o.opened.GetSessionId())
		}
		if err == nil {
			s.adopt(o)
			c.emit(Event{Kind: EventResumed, SessionID: s.id, Address: c.addresses[address], Held: len(o.opened.GetHeld())})
			return o.stream
		}
		if code := status.Code(err); code == codes.NotFound || code == codes.Unauthenticated || code == codes.PermissionDenied {
			s.expire(sessionEndedError("resume refused", err))
			return nil
		}
		timer := time.NewTimer(min(backoff, time.Until(sessionEnd)))
		select {
		case <-s.done:
			timer.Stop()
			return nil
		case <-timer.C:
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// claims lists the holds the session believes it has: held locks (with their hold counts) and
// those with a release in flight, which may not have arrived. Call with mu held.
func (s *session) claims() []*pb.HeldLock {
	counts := map[holdKey]*pb.HeldLock{}
	var held []*pb.HeldLock
	claim := func(l *Lock, n uint32) {
		key := holdKey{l.name, l.owner}
		if h := counts[key]; h != nil {
			h.HoldCount += n
			return
		}
		h := &pb.HeldLock{Name: l.name, Owner: l.owner, FencingToken: l.token, HoldCount: n}
		counts[key] = h
		held = append(held, h)
	}
	for _, lock := range s.held {
		claim(lock, lock.holds)
	}
	for _, p := range s.pending {
		if p.releasing != nil {
			claim(p.releasing, 1)
		}
	}
	return held
}

// adopt makes a resumed stream current: claimed locks missing from `opened.held` are lost, the
// rest are renewed as of the open's send time; releases whose hold is gone are done, the others,
// proclaims and every pending acquire (same request_id, what is left of its wait) are sent again;
// an acquire given up on is sent as a try-once plus cancel (withdrawal).
func (s *session) adopt(o *openedStream) {
	still := map[holdKey]uint64{}
	for _, h := range o.opened.GetHeld() {
		still[holdKey{h.GetName(), h.GetOwner()}] = h.GetFencingToken()
	}
	var resend []*pb.SessionRequest
	var done []*pending
	s.mu.Lock()
	old := s.cancelStream
	s.stream, s.cancelStream = o.stream, o.cancel
	if ttl := o.opened.GetTtl().AsDuration(); ttl > 0 {
		s.clock.ttl = ttl
	}
	s.clock.confirm(o.sentAt)
	for key, lock := range s.held {
		if token, ok := still[key]; ok && token == lock.token {
			lock.arm()
		} else {
			lock.lose(LostExpired)
		}
	}
	for id, p := range s.pending {
		switch {
		case p.release != nil:
			if _, ok := still[holdKey{p.release.GetName(), p.release.GetOwner()}]; ok {
				resend = append(resend, &pb.SessionRequest{Kind: &pb.SessionRequest_Release{Release: p.release}})
			} else {
				delete(s.pending, id)
				done = append(done, p)
			}
		case p.proclaim != nil:
			resend = append(resend, &pb.SessionRequest{Kind: &pb.SessionRequest_Proclaim{Proclaim: p.proclaim}})
		case p.transfer != nil:
			resend = append(resend, &pb.SessionRequest{Kind: &pb.SessionRequest_Transfer{Transfer: p.transfer}})
		case p.requestRelease != nil:
			resend = append(resend, &pb.SessionRequest{Kind: &pb.SessionRequest_RequestRelease{RequestRelease: p.requestRelease}})
		case p.acquire != nil && p.acquire.abandoned:
			resend = append(resend, p.acquire.withdrawal()...)
		case p.acquire != nil:
			resend = append(resend, p.acquire.remaining())
		}
	}
	s.mu.Unlock()
	old()
	for _, p := range done {
		p.answer <- answer{reply: &pb.SessionResponse{}} // the hold is gone: as good as released
	}
	for _, req := range resend {
		_ = s.sendOn(o.stream, req)
	}
}
