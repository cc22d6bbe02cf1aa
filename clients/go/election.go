package turnstile

import (
	"context"

	"google.golang.org/grpc/status"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// Election is leader election on the exclusive lock name (docs/elections.md): candidates
// campaign (an acquire that waits, FIFO), the holder leads, and its value — set at the campaign,
// replaced by Proclaim — is what observers see.
type Election struct {
	client *Client
	name   string
}

// Election returns the election on the lock name.
func (c *Client) Election(name string) *Election {
	return &Election{client: c, name: name}
}

// Leader is the holder of an election's lock.
type Leader struct {
	SessionID, Owner string
	Value            []byte
	Token            uint64
}

// Leadership is a won election: the held *Lock (Done is closed before anyone else can be
// elected), plus Proclaim and Resign.
type Leadership struct {
	*Lock
}

// Campaign waits (bounded by ctx, or opts.Wait on the coordinator) until elected, with value
// as the leader's value. A grant whose lease had already run out when it arrived is never
// returned (an *Error with Reason lost): campaign again.
func (e *Election) Campaign(ctx context.Context, value []byte, opts *AcquireOptions) (*Leadership, error) {
	o := *opts.orDefault()
	o.Value = value
	if o.AskToYield != "" {
		o.OnQueued = e.askOnce(o.OnQueued, o.AskToYield)
	}
	lock, err := e.client.acquire(ctx, e.name, exclusive, &o, false)
	if err != nil {
		return nil, err
	}
	return &Leadership{Lock: lock}, nil
}

// Proclaim replaces the leader's value; observers see the change. It fails with the loss
// (Reason lost) once the leadership is lost, and Reason not-held after Resign.
func (l *Leadership) Proclaim(ctx context.Context, value []byte) error {
	s := l.session
	s.mu.Lock()
	if l.err != nil {
		s.mu.Unlock()
		return l.err
	}
	if l.released {
		s.mu.Unlock()
		return &Error{Reason: ReasonNotHeld, Name: l.name, Message: "proclaim: the leadership was resigned"}
	}
	if s.ended != nil {
		s.mu.Unlock()
		return s.ended
	}
	req := &pb.Proclaim{RequestId: s.newRequestID(), Name: l.name, Owner: l.owner, Value: value}
	msg := &pb.SessionRequest{Kind: &pb.SessionRequest_Proclaim{Proclaim: req}}
	if err := s.client.checkRequest("proclaim", l.name, msg); err != nil {
		s.mu.Unlock()
		return err
	}
	p := &pending{answer: make(chan answer, 1), proclaim: req}
	s.pending[req.RequestId] = p
	stream := s.stream
	s.mu.Unlock()
	_ = s.sendOn(stream, msg)
	return s.awaitReply(ctx, p, l.name, "proclaim")
}

// Resign gives the leadership up (releases the lock): the next candidate is elected at once.
func (l *Leadership) Resign(ctx context.Context) error {
	return l.Release(ctx)
}

// Leader answers the leader now (nil when nobody leads), asking the coordinators in turn.
func (e *Election) Leader(ctx context.Context) (*Leader, error) {
	var lastErr error
	for _, stub := range e.client.stubs {
		described, err := stub.Describe(ctx, &pb.DescribeRequest{Name: e.name})
		if err == nil {
			return leaderOf(described.GetHolders()), nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, rpcError("describe", e.name, lastErr)
}

// leaderOf is the first holder in grant order, or nil.
func leaderOf(holders []*pb.Holder) *Leader {
	var first *pb.Holder
	for _, h := range holders {
		if first == nil || h.GetFencingToken() < first.GetFencingToken() {
			first = h
		}
	}
	if first == nil {
		return nil
	}
	return &Leader{SessionID: first.GetSessionId(), Owner: first.GetOwner(), Value: first.GetValue(), Token: first.GetFencingToken()}
}

// rpcError turns a failed unary call into an *Error: the status's reason when it maps to one,
// else connection.
func rpcError(what, name string, err error) *Error {
	st, _ := status.FromError(err)
	reason, ok := statusReasons[st.Code()]
	if !ok {
		reason = ReasonConnection
	}
	return &Error{Reason: reason, Name: name, Message: what + ": " + st.Message(), Err: err}
}
