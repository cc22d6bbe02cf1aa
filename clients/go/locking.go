package turnstile

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// claim is what one acquire asks for: a mode and, for SHARED, the limit.
type claim struct {
	mode  pb.LockMode
	limit uint32
}

var exclusive = claim{mode: pb.LockMode_LOCK_MODE_EXCLUSIVE}

// Acquire waits for the exclusive lock name and returns it held. It waits until granted, until
// opts.Wait runs out on the coordinator (an *Error with Reason timeout naming the blockers), or
// until ctx is done (the request is withdrawn; an *Error with Reason cancelled wrapping ctx.Err()).
// With a Wait it ends by Wait + 1 s whatever the link or the store do: then a timeout, withdrawn.
func (c *Client) Acquire(ctx context.Context, name string, opts *AcquireOptions) (*Lock, error) {
	return c.acquire(ctx, name, exclusive, opts, false)
}

// TryAcquire takes the exclusive lock name if it is free and nobody waits for it; otherwise it
// fails at once with an *Error of Reason busy (errors.Is(err, ErrBusy)). opts.Wait is ignored.
func (c *Client) TryAcquire(ctx context.Context, name string, opts *AcquireOptions) (*Lock, error) {
	return c.acquire(ctx, name, exclusive, opts, true)
}

// WithLock acquires name (as Acquire), runs fn with a context that is also cancelled the moment
// the lock may be lost, and releases the lock. It returns fn's error; else the lock's loss if it
// was lost while fn ran; else the release's error.
func (c *Client) WithLock(ctx context.Context, name string, fn func(ctx context.Context, lock *Lock) error, opts *AcquireOptions) error {
	return c.withClaim(ctx, name, exclusive, opts, fn)
}

func (c *Client) acquire(ctx context.Context, name string, want claim, opts *AcquireOptions, try bool) (*Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Reason: ReasonCancelled, Name: name, Message: "acquire: " + err.Error(), Err: err}
	}
	opts = opts.orDefault()
	return askOnLiveSession(c, ctx, name, opts, try, func(s *session, owner string, left time.Duration, giveUp time.Time) (*Lock, error) {
		req := &pb.Acquire{Name: name, Owner: owner, Mode: want.mode, Limit: want.limit, Value: opts.Value}
		if opts.lockDelay != nil {
			req.LockDelay = durationpb.New(*opts.lockDelay)
		}
		req.Priority = opts.Priority
		return s.acquire(ctx, req, left, giveUp, opts.OnQueued)
	})
}

// askOnLiveSession is the loop of Acquire and AcquireAll: it picks the owner (opts.Owner or a new
// one) and the wait (try: 0; none: -1, ctx decides), then asks on the open session with what is left
// of the wait. A session that ended under a request that never reached an answer: it opens a new one
// and asks again (a try-once or a bounded wait too; nothing was granted to a dead session) — unless
// a request it carried ended it (refusedRequest: one over the coordinator's --max-message-bytes),
// which the same request would do again: then the session's end is the error.
func askOnLiveSession[T any](c *Client, ctx context.Context, name string, opts *AcquireOptions, try bool,
	ask func(s *session, owner string, left time.Duration, giveUp time.Time) (T, error)) (T, error) {
	owner := c.ownerFor(ctx, opts)
	wait := opts.Wait
	switch {
	case try:
		wait = 0
	case wait <= 0:
		wait = -1
	}
	start := time.Now()
	giveUp := giveUpAt(wait, start)
	for {
		s, err := c.sessionBy(ctx, giveUp, name, wait)
		if err != nil {
			var none T
			return none, err
		}
		left := wait // asked again on a new session: what is left of the wait
		if wait > 0 {
			left = max(0, time.Until(start.Add(wait)))
		}
		got, err := ask(s, owner, left, giveUp)
		var e *Error
		if errors.As(err, &e) && e.Reason == ReasonSessionEnded && !refusedRequest(e.Err) && s.isEnded() && ctx.Err() == nil && !c.isClosed() {
			continue
		}
		return got, err
	}
}

func (c *Client) withClaim(ctx context.Context, name string, want claim, opts *AcquireOptions, fn func(context.Context, *Lock) error) error {
	lock, err := c.acquire(ctx, name, want, opts, false)
	if err != nil {
		return err
	}
	// fn's context is the lock's unit of work: acquires made with it take the lock's owner.
	return runWhileHeld(c.WithOwner(ctx, lock.Owner()), lock, func(work context.Context) error { return fn(work, lock) })
}

// held is what runWhileHeld needs of a Lock or a LockSet.
type held interface {
	Context() context.Context
	Err() error
	Release(ctx context.Context) error
}

// runWhileHeld runs fn with a context also cancelled the moment h may be lost, then releases h.
// It returns fn's error; else h's loss while fn ran; else the release's error.
func runWhileHeld(ctx context.Context, h held, fn func(context.Context) error) error {
	work, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(h.Context(), func() { cancel(context.Cause(h.Context())) })
	fnErr := fn(work)
	stop()
	cancel(nil)
	lost := h.Err()
	releaseErr := h.Release(context.WithoutCancel(ctx))
	switch {
	case fnErr != nil:
		return fnErr
	case lost != nil:
		return lost
	default:
		return releaseErr
	}
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
