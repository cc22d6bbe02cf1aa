package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	pb "turnstile/examples/go/gen/turnstile/v1"
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

// openStream starts a Session stream on client, sends open and waits (bounded by ctx and
// openTimeout) for `opened`. The stream outlives ctx; its cancel ends it.
func openStream(ctx context.Context, client pb.LockServiceClient, open *pb.Open) (*openedStream, error) {
	ctx, stop := context.WithTimeout(ctx, openTimeout)
	defer stop()
	streamCtx, cancel := context.WithCancel(context.Background())
	stream, err := client.Session(streamCtx)
	if err != nil {
		cancel()
		return nil, err
	}
	sentAt := time.Now()
	if err := stream.Send(&pb.SessionRequest{Kind: &pb.SessionRequest_Open{Open: open}}); err != nil {
		cancel()
		return nil, err
	}
	first := make(chan answer, 1)
	go func() {
		reply, err := stream.Recv()
		first <- answer{reply: reply, err: err}
	}()
	select {
	case got := <-first:
		if got.err != nil {
			cancel()
			return nil, got.err
		}
		if got.reply.GetOpened() == nil {
			cancel()
			return nil, fmt.Errorf("open: expected opened, got %v", got.reply)
		}
		return &openedStream{stream: stream, cancel: cancel, opened: got.reply.GetOpened(), sentAt: sentAt}, nil
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
}

// resumable reports whether a stream that ended with err may go on as the same session on
// another stream: UNAVAILABLE is a coordinator draining ("resume on another coordinator") or
// unreachable. Any other status ends the session.
func resumable(err error) bool {
	return status.Code(err) == codes.Unavailable
}

// resume reopens the session on the coordinators in turn, with backoff, until one answers
// `opened{resumed}` or the lease runs out; it returns the new stream, or nil once the session
// ended (lease over, session unknown or secret refused, or Close called meanwhile). Held locks
// stay valid by their local lease while it tries.
func (s *Session) resume(cause error) pb.LockService_SessionClient {
	log.Printf("session %s: stream ended (%v); resuming", s.ID, cause)
	backoff := firstBackoff
	for {
		s.mu.Lock()
		if s.ended != nil {
			s.mu.Unlock()
			return nil
		}
		sessionEnd := s.clock.sessionEnd()
		client := s.coordinators[s.next%len(s.coordinators)]
		s.next++
		open := &pb.Open{
			ClientName: s.clientName, Ttl: durationpb.New(s.clock.ttl),
			ResumeSessionId: s.ID, ResumeSecret: s.secret, Held: s.claims(),
		}
		s.mu.Unlock()
		if !time.Now().Before(sessionEnd) {
			s.end(fmt.Errorf("%w: lease ran out while resuming (%v)", ErrSessionEnded, cause))
			return nil
		}
		o, err := openStream(context.Background(), client, open)
		if err == nil && (!o.opened.GetResumed() || o.opened.GetSessionId() != s.ID) {
			o.cancel()
			err = fmt.Errorf("resume answered with a new session %s", o.opened.GetSessionId())
		}
		if err == nil {
			s.adopt(o)
			log.Printf("session %s: resumed with %d lock(s)", s.ID, len(o.opened.GetHeld()))
			return o.stream
		}
		if code := status.Code(err); code == codes.NotFound || code == codes.Unauthenticated {
			s.end(fmt.Errorf("%w: resume refused: %v", ErrSessionEnded, err))
			return nil
		}
		log.Printf("session %s: resume attempt failed: %v", s.ID, err)
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

// claims lists the holds the session believes it has: held locks and those with a release in
// flight (which may not have arrived). Call with mu held.
func (s *Session) claims() []*pb.HeldLock {
	var held []*pb.HeldLock
	for key, lock := range s.held {
		held = append(held, &pb.HeldLock{Name: key.name, Owner: key.owner, FencingToken: lock.Token, HoldCount: 1})
	}
	for _, p := range s.pending {
		if l := p.releasing; l != nil {
			held = append(held, &pb.HeldLock{Name: l.Name, Owner: l.Owner, FencingToken: l.Token, HoldCount: 1})
		}
	}
	return held
}

// adopt makes a resumed stream current: claimed locks missing from `opened.held` are lost, the
// rest are renewed as of the open's send time; releases whose hold is gone are done, the others
// and every pending acquire (same request_id, what is left of its wait) are sent again.
func (s *Session) adopt(o *openedStream) {
	still := map[holdKey]uint64{}
	for _, h := range o.opened.GetHeld() {
		still[holdKey{h.GetName(), h.GetOwner()}] = h.GetFencingToken()
	}
	var resend []*pb.SessionRequest
	var done []*pendingRequest
	s.mu.Lock()
	old := s.cancel
	s.stream, s.cancel = o.stream, o.cancel
	if ttl := o.opened.GetTtl().AsDuration(); ttl > 0 {
		s.clock.ttl = ttl
	}
	s.clock.confirm(o.sentAt)
	for key, lock := range s.held {
		if token, ok := still[key]; ok && token == lock.Token {
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
		case p.acquire != nil:
			resend = append(resend, &pb.SessionRequest{Kind: &pb.SessionRequest_Acquire{Acquire: p.acquire.remaining()}})
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

// remaining is the acquire to send again on resume: the same request_id, with what is left of a
// finite wait (0, a try-once, when it ran out). Call with the session's mu held.
func (a *acquireAttempt) remaining() *pb.Acquire {
	req := proto.Clone(a.request).(*pb.Acquire)
	if !a.waitUntil.IsZero() {
		req.Wait = durationpb.New(max(0, time.Until(a.waitUntil)))
	}
	return req
}
