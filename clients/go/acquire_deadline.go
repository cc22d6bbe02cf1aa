package turnstile

import (
	"context"
	"fmt"
	"strings"
	"time"

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
// stops waiting for the open at its give-up time: then ReasonConnection naming the addresses (no
// coordinator answered), with nothing sent.
func (c *Client) sessionBy(ctx context.Context, giveUp time.Time, name string, wait time.Duration) (*session, error) {
	if giveUp.IsZero() {
		return c.session(ctx)
	}
	openCtx, stop := context.WithDeadline(ctx, giveUp)
	defer stop()
	s, err := c.session(openCtx)
	if err != nil && ctx.Err() == nil && openCtx.Err() != nil {
		message := fmt.Sprintf("no coordinator answered the session's open within acquire.wait of %s + %s (tried %s); nothing was sent",
			wait, answerGrace, strings.Join(c.addresses, ", "))
		return nil, &Error{Reason: ReasonConnection, Name: name, Message: message, Err: err}
	}
	return s, err
}

// withdraw gives up on an acquire still unanswered at its give-up time: the caller gets a timeout
// and a cancel is sent. The request stays registered, so a grant that still arrives is released
// (onAcquired, onAcquiredAll) and a resume re-sends it as a try-once plus cancel (adopt):
// withdrawn, never held.
func (s *session) withdraw(p *pending, wait time.Duration) (answer, error) {
	attempt := p.acquire
	s.mu.Lock()
	if s.pending[attempt.requestID()] != p {
		s.mu.Unlock()
		return <-p.answer, nil // answered just now: the answer is on its way
	}
	attempt.abandoned = true
	stream := s.stream
	s.mu.Unlock()
	// Sent apart from the caller: a write held by HTTP/2 flow control (a stalled link) must not
	// hold the caller past its bound; it ends with the stream at the latest.
	go func() { _ = s.sendOn(stream, cancelRequest(attempt.requestID())) }()
	message := fmt.Sprintf("no answer within %s.wait of %s + %s (coordinator unreachable or its store stalled); the %s was withdrawn",
		attempt.field(), wait, answerGrace, attempt.kind())
	return answer{}, &Error{Reason: ReasonTimeout, Name: attempt.name(), Message: message}
}

func cancelRequest(requestID string) *pb.SessionRequest {
	return &pb.SessionRequest{Kind: &pb.SessionRequest_Cancel{Cancel: &pb.Cancel{RequestId: requestID}}}
}
