package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	pb "turnstile/examples/go/gen/turnstile/v1"
)

// ErrSessionEnded is returned for requests made or pending when the session stream ended.
var ErrSessionEnded = errors.New("session ended")

// answer is what a pending request gets: the server's reply (and, for a grant, the Lock), or
// the error that ended the session.
type answer struct {
	reply *pb.SessionResponse
	lock  *Lock
	err   error
}

// pendingRequest is a request in flight, keyed by its request_id.
type pendingRequest struct {
	answer  chan answer // buffered 1: the receive loop never blocks on it
	acquire *acquireAttempt
	// A release in flight: the hold it drops, claimed on resume and sent again if still held.
	release   *pb.Release
	releasing *Lock
}

// Session is one session: opened with `open`, kept alive every ttl/3, answers routed by
// request_id, `lost` and local lease judgement applied to held locks. When its stream breaks
// (UNAVAILABLE: a coordinator draining or gone) it resumes on the next coordinator within the
// lease, keeping its locks (resume.go); when the session cannot be resumed, every held lock is
// lost and every pending request fails with ErrSessionEnded.
type Session struct {
	ID string

	coordinators []pb.LockServiceClient
	clientName   string
	secret       string
	stream       pb.LockService_SessionClient // guarded by mu: replaced on resume
	cancel       context.CancelFunc           // guarded by mu: cancels stream
	sendMu       sync.Mutex                   // grpc-go allows one concurrent sender per stream

	mu      sync.Mutex
	clock   *leaseClock
	pending map[string]*pendingRequest
	held    map[holdKey]*Lock
	nextID  uint64
	next    int // index of the coordinator the next resume tries first
	ended   error
	done    chan struct{} // closed when the session ends (stream over or Close called)

	received chan struct{} // closed when the receive loop has seen the end of the stream
}

// Open starts a session on the first of coordinators that answers (each is tried once) and waits
// (bounded by ctx) for `opened`; ttl is the requested session TTL, which the server may clamp.
// The session resumes on these coordinators, in turn, when its stream breaks.
func Open(ctx context.Context, coordinators []pb.LockServiceClient, clientName string, ttl time.Duration) (*Session, error) {
	var err error
	for i, client := range coordinators {
		open := &pb.Open{ClientName: clientName, Ttl: durationpb.New(ttl)}
		var o *openedStream
		if o, err = openStream(ctx, client, open); err != nil {
			continue
		}
		s := &Session{
			ID: o.opened.GetSessionId(), coordinators: coordinators, next: i + 1, clientName: clientName,
			secret: o.opened.GetResumeSecret(), stream: o.stream, cancel: o.cancel, clock: newLeaseClock(ttl),
			pending: map[string]*pendingRequest{}, held: map[holdKey]*Lock{}, done: make(chan struct{}),
			received: make(chan struct{}),
		}
		if granted := o.opened.GetTtl().AsDuration(); granted > 0 {
			s.clock.ttl = granted
		}
		// The open is the session's first renewal: resuming makes sense until it + ttl.
		s.clock.confirm(o.sentAt)
		go s.receive()
		go s.keepAlive()
		return s, nil
	}
	return nil, err
}

// Close sends `close` (the server releases everything) and waits, bounded by ctx, for the
// stream to end; every held lock is lost locally first.
func (s *Session) Close(ctx context.Context) error {
	s.end(ErrSessionEnded)
	err := s.send(&pb.SessionRequest{Kind: &pb.SessionRequest_Close{Close: &pb.Close{}}})
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if err == nil {
		// The server ends the stream once everything is released; the receive loop sees io.EOF.
		select {
		case <-s.received:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	cancel()
	return err
}

// send writes req on the current stream. A write to a broken stream fails quietly: the receive
// loop sees the break, and a resume sends every pending request again.
func (s *Session) send(req *pb.SessionRequest) error {
	s.mu.Lock()
	stream := s.stream
	s.mu.Unlock()
	return s.sendOn(stream, req)
}

func (s *Session) sendOn(stream pb.LockService_SessionClient, req *pb.SessionRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return stream.Send(req)
}

// newRequestID returns an id unique among this session's requests; call with mu held.
func (s *Session) newRequestID() string {
	s.nextID++
	return strconv.FormatUint(s.nextID, 10)
}

// keepAlive sends keep_alive{seq} every ttl/3 (re-read each time: an ack may change the TTL).
func (s *Session) keepAlive() {
	var seq uint64
	for {
		s.mu.Lock()
		interval := s.clock.ttl / 3
		s.mu.Unlock()
		timer := time.NewTimer(interval)
		select {
		case <-s.done:
			timer.Stop()
			return
		case <-timer.C:
		}
		seq++
		s.mu.Lock()
		s.clock.sent(seq)
		s.mu.Unlock()
		_ = s.send(&pb.SessionRequest{Kind: &pb.SessionRequest_KeepAlive{KeepAlive: &pb.KeepAlive{Seq: seq}}})
	}
}

// receive routes every server message until the stream ends; then it resumes the session on
// another stream (resume.go) and goes on reading that one, or ends the session.
func (s *Session) receive() {
	defer close(s.received)
	s.mu.Lock()
	stream := s.stream
	s.mu.Unlock()
	for {
		reply, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.end(ErrSessionEnded)
				return
			}
			if !resumable(err) {
				s.end(fmt.Errorf("%w: %v", ErrSessionEnded, err))
				return
			}
			if stream = s.resume(err); stream == nil {
				return
			}
			continue
		}
		switch kind := reply.Kind.(type) {
		case *pb.SessionResponse_Acquired:
			s.onAcquired(reply, kind.Acquired)
		case *pb.SessionResponse_Released:
			s.settle(kind.Released.GetRequestId(), answer{reply: reply})
		case *pb.SessionResponse_Failed:
			s.settle(kind.Failed.GetRequestId(), answer{reply: reply})
		case *pb.SessionResponse_Lost:
			s.onLost(kind.Lost)
		case *pb.SessionResponse_KeepAliveAck:
			s.onKeepAliveAck(kind.KeepAliveAck)
		default:
			// `queued` only reports a position; unknown kinds come from a newer server.
		}
	}
}

func (s *Session) settle(requestID string, a answer) {
	s.mu.Lock()
	p := s.pending[requestID]
	delete(s.pending, requestID)
	s.mu.Unlock()
	if p != nil {
		p.answer <- a
	}
}

func (s *Session) onKeepAliveAck(ack *pb.KeepAliveAck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock.acked(ack.GetSeq())
	if ttl := ack.GetTtl().AsDuration(); ttl > 0 {
		s.clock.ttl = ttl
	}
	// Deadlines moved forward (a `lost` for an expired hold came before this ack).
	for _, lock := range s.held {
		lock.arm()
	}
}

// end marks the session over: held locks are lost first (told first), then pending requests fail.
func (s *Session) end(err error) {
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return
	}
	s.ended = err
	close(s.done)
	for _, lock := range s.held {
		lock.lose(LostSessionEnded)
	}
	pending := s.pending
	s.pending = map[string]*pendingRequest{}
	s.mu.Unlock()
	for _, p := range pending {
		p.answer <- answer{err: err}
	}
}

// Ended reports whether the session is over (closed, or its stream ended and it could not be resumed).
func (s *Session) Ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}
