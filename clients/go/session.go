package turnstile

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// answer is what a pending request gets: the server's reply (and, for a grant, the Lock), or the
// error that ended the session.
type answer struct {
	reply *pb.SessionResponse
	lock  *Lock
	locks []*Lock // the locks of a granted AcquireAll set
	err   *Error
}

// all is every lock the answer granted: none, one, or a set's.
func (a answer) all() []*Lock {
	if a.lock != nil {
		return []*Lock{a.lock}
	}
	return a.locks
}

// pending is a request in flight, keyed by its request_id.
type pending struct {
	answer  chan answer // buffered 1: the receive loop never blocks on it
	acquire *acquireAttempt
	// A release in flight: the hold it drops, claimed on resume and sent again if still held.
	release   *pb.Release
	releasing *Lock
	proclaim  *pb.Proclaim
	// A transfer or release request in flight (handover.go): sent again after a resume, as a proclaim.
	transfer       *pb.Transfer
	requestRelease *pb.RequestRelease
}

// session is one Turnstile session: opened with `open`, kept alive every ttl/3, answers routed by
// request_id, `lost` and the local lease clock applied to held locks, resumed on another
// coordinator when its stream ends UNAVAILABLE (resume.go).
type session struct {
	client *Client
	id     string
	secret string

	root     context.Context // every stream of the session derives from it
	stopRoot context.CancelFunc
	sendMu   sync.Mutex // grpc-go allows one sender at a time per stream
	workers  sync.WaitGroup

	mu           sync.Mutex
	stream       pb.LockService_SessionClient
	cancelStream context.CancelFunc
	address      int // index of the coordinator the stream is on
	clock        *leaseClock
	pending      map[string]*pending
	held         map[holdKey]*Lock
	nextID       uint64
	ended        *Error
	done         chan struct{} // closed when the session ends
	received     chan struct{} // closed when the receive loop is over
}

// openSession opens a session on the first coordinator that answers (each tried once, bounded
// by ctx), starts its receive and keepalive goroutines, and returns it with that address.
func openSession(ctx context.Context, c *Client) (*session, string, error) {
	root, stopRoot := context.WithCancel(context.Background())
	var lastErr error
	for i, stub := range c.stubs {
		open := &pb.Open{ClientName: c.opts.ClientName, Ttl: durationpb.New(c.opts.TTL)}
		o, err := openStream(ctx, root, stub, open)
		if err == errNoAnswer {
			err = &Error{Reason: ReasonConnection, Message: c.addresses[i] + " " + errNoAnswer.Error(), Err: err}
		}
		if err != nil {
			lastErr = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		s := &session{
			client: c, id: o.opened.GetSessionId(), secret: o.opened.GetResumeSecret(),
			root: root, stopRoot: stopRoot, stream: o.stream, cancelStream: o.cancel, address: i,
			clock: newLeaseClock(c.opts.TTL), pending: map[string]*pending{}, held: map[holdKey]*Lock{},
			done: make(chan struct{}), received: make(chan struct{}),
		}
		if granted := o.opened.GetTtl().AsDuration(); granted > 0 {
			s.clock.ttl = granted
		}
		// The open is the session's first renewal.
		s.clock.confirm(o.sentAt)
		s.workers.Add(2)
		go s.receive()
		go s.keepAlive()
		return s, c.addresses[i], nil
	}
	stopRoot()
	var noAnswer *Error
	if errors.As(lastErr, &noAnswer) && ctx.Err() == nil {
		return nil, "", &Error{Reason: ReasonConnection, Message: "open a session on any of the coordinators: " + noAnswer.Message, Err: lastErr}
	}
	return nil, "", connectionError("open a session on any of the coordinators", lastErr)
}

// close ends the session: every held lock is lost locally first, then `close` is sent and the
// stream read until it ends (bounded by ctx); then the goroutines are stopped.
func (s *session) close(ctx context.Context) error {
	// A write stuck behind HTTP/2 flow control (a stalled coordinator) ends with the streams when
	// ctx does, so Close keeps its bound.
	defer context.AfterFunc(ctx, s.stopRoot)()
	var err error
	if s.end(&Error{Reason: ReasonSessionEnded, Message: "client closed"}) {
		if err = s.send(&pb.SessionRequest{Kind: &pb.SessionRequest_Close{Close: &pb.Close{}}}); err == nil {
			select {
			case <-s.received: // the server released everything and ended the stream
			case <-ctx.Done():
				err = ctx.Err()
			}
		} else {
			err = nil // the stream is gone: the leases end on their own
		}
	}
	s.stop()
	return err
}

// stop cancels every stream of the session and waits for its goroutines.
func (s *session) stop() {
	s.stopRoot()
	s.workers.Wait()
}

func (s *session) isEnded() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// send writes req on the current stream. A write to a broken stream fails quietly: the receive
// loop sees the break, and a resume sends every pending request again.
func (s *session) send(req *pb.SessionRequest) error {
	s.mu.Lock()
	stream := s.stream
	s.mu.Unlock()
	return s.sendOn(stream, req)
}

func (s *session) sendOn(stream pb.LockService_SessionClient, req *pb.SessionRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return stream.Send(req)
}

// newRequestID returns an id unique for the session's lifetime; call with mu held.
func (s *session) newRequestID() string {
	s.nextID++
	return strconv.FormatUint(s.nextID, 10)
}

// keepAlive sends keep_alive{seq} every ttl/3 (re-read each time: an ack may change the TTL).
func (s *session) keepAlive() {
	defer s.workers.Done()
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
// another stream (resume.go) and reads that one, or ends the session.
func (s *session) receive() {
	defer s.workers.Done()
	defer close(s.received)
	s.mu.Lock()
	stream := s.stream
	s.mu.Unlock()
	for {
		reply, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.expire(&Error{Reason: ReasonSessionEnded, Message: "the coordinator ended the session"})
				return
			}
			if !resumable(err) || s.isEnded() {
				s.expire(sessionEndedError("session stream ended", err))
				return
			}
			if stream = s.resume(err); stream == nil {
				return
			}
			continue
		}
		s.route(reply)
	}
}

// route handles one server message.
func (s *session) route(reply *pb.SessionResponse) {
	switch kind := reply.Kind.(type) {
	case *pb.SessionResponse_Acquired:
		s.onAcquired(reply, kind.Acquired)
	case *pb.SessionResponse_AcquiredAll:
		s.onAcquiredAll(reply, kind.AcquiredAll)
	case *pb.SessionResponse_Queued:
		s.onQueued(kind.Queued)
	case *pb.SessionResponse_Released:
		s.settle(kind.Released.GetRequestId(), answer{reply: reply})
	case *pb.SessionResponse_Proclaimed:
		s.settle(kind.Proclaimed.GetRequestId(), answer{reply: reply})
	case *pb.SessionResponse_Transferred:
		s.settle(kind.Transferred.GetRequestId(), answer{reply: reply})
	case *pb.SessionResponse_ReleaseRequestSent:
		s.settle(kind.ReleaseRequestSent.GetRequestId(), answer{reply: reply})
	case *pb.SessionResponse_ReleaseRequested:
		s.onReleaseRequested(kind.ReleaseRequested)
	case *pb.SessionResponse_Failed:
		s.settle(kind.Failed.GetRequestId(), answer{reply: reply})
	case *pb.SessionResponse_Lost:
		s.onLost(kind.Lost)
	case *pb.SessionResponse_KeepAliveAck:
		s.onKeepAliveAck(kind.KeepAliveAck)
	default:
		// Unknown kinds come from a newer server.
	}
}

func (s *session) settle(requestID string, a answer) {
	s.mu.Lock()
	p := s.pending[requestID]
	delete(s.pending, requestID)
	s.mu.Unlock()
	if p != nil {
		p.answer <- a
	}
}

func (s *session) onKeepAliveAck(ack *pb.KeepAliveAck) {
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

// end marks the session over: held locks are lost first (told first), then pending requests
// fail with err. It reports whether this call ended it.
func (s *session) end(err *Error) bool {
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return false
	}
	s.ended = err
	close(s.done)
	for _, lock := range s.held {
		lock.lose(LostSessionEnded)
	}
	inFlight := s.pending
	s.pending = map[string]*pending{}
	s.mu.Unlock()
	for _, p := range inFlight {
		p.answer <- answer{err: err}
	}
	return true
}

// expire ends the session without Close (stream ended for good, resume impossible) and reports it.
func (s *session) expire(err *Error) {
	if s.end(err) {
		s.client.emit(Event{Kind: EventExpired, SessionID: s.id, Err: err})
	}
}
