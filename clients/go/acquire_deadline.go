package turnstile

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// answerGrace is how long after its wait an acquire still waits for the coordinator's answer. The
// coordinator answers a finite wait itself; past this grace its link is dead or its store stalled,
// and the client gives up on its own (docs/protocol.md, "The client's own deadline").
const answerGrace = time.Second

// giveUpAt is when an acquire with wait (< 0: none) called at start gives up: wait plus
// answerGrace; the zero time for no wait.
func giveUpAt(wait time.Duration, start time.Time) time.Time {
	if wait < 0 {
		return time.Time{}
	}
	return start.Add(wait + answerGrace)
}

// sessionBy returns the open session like Client.session, but a first acquire with a finite wait
// stops waiting for the open at its give-up time: then a timeout, with nothing sent.
func (c *Client) sessionBy(ctx context.Context, giveUp time.Time, name string, wait time.Duration) (*session, error) {
	if giveUp.IsZero() {
		return c.session(ctx)
	}
	openCtx, stop := context.WithDeadline(ctx, giveUp)
	defer stop()
	s, err := c.session(openCtx)
	if err != nil && ctx.Err() == nil && openCtx.Err() != nil {
		message := fmt.Sprintf("the session did not open within acquire.wait of %s + %s; nothing was sent", wait, answerGrace)
		return nil, &Error{Reason: ReasonTimeout, Name: name, Message: message, Err: err}
	}
	return s, err
}

// withdraw gives up on an acquire still unanswered at its give-up time: the caller gets a timeout
// and a cancel is sent. The request stays registered, so a grant that still arrives is released
// (onAcquired) and a resume re-sends it as a try-once plus cancel (adopt): withdrawn, never held.
func (s *session) withdraw(p *pending, wait time.Duration) (*Lock, error) {
	req := p.acquire.request
	s.mu.Lock()
	if s.pending[req.RequestId] != p {
		s.mu.Unlock()
		return granted(<-p.answer) // answered just now: the answer is on its way
	}
	p.acquire.abandoned = true
	stream := s.stream
	s.mu.Unlock()
	// Sent apart from the caller: a write held by HTTP/2 flow control (a stalled link) must not
	// hold the caller past its bound; it ends with the stream at the latest.
	go func() { _ = s.sendOn(stream, cancelRequest(req.RequestId)) }()
	message := fmt.Sprintf("no answer within acquire.wait of %s + %s (coordinator unreachable or its store stalled); the acquire was withdrawn", wait, answerGrace)
	return nil, &Error{Reason: ReasonTimeout, Name: req.Name, Message: message}
}

// withdrawal is what a resume sends for an acquire given up on: the same request_id as a
// try-once, then its cancel, so a grant made meanwhile is found (and released when it arrives).
func (a *acquireAttempt) withdrawal() []*pb.SessionRequest {
	req := proto.Clone(a.request).(*pb.Acquire)
	req.Wait = durationpb.New(0)
	return []*pb.SessionRequest{
		{Kind: &pb.SessionRequest_Acquire{Acquire: req}},
		cancelRequest(req.RequestId),
	}
}

func cancelRequest(requestID string) *pb.SessionRequest {
	return &pb.SessionRequest{Kind: &pb.SessionRequest_Cancel{Cancel: &pb.Cancel{RequestId: requestID}}}
}
