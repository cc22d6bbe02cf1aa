package turnstile

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// LockMode is how a Claim of a set holds its name: exclusively (the zero value) or shared.
type LockMode string

// The modes of a Claim.
const (
	ModeExclusive LockMode = "exclusive"
	ModeShared    LockMode = "shared"
)

// Claim is one lock of an AcquireAll set: a name, EXCLUSIVE unless Mode is ModeShared, and for
// SHARED the most holders at once (Limit; 0: no limit), checked against the limit in force.
type Claim struct {
	Name  string
	Mode  LockMode
	Limit uint32
}

// Names is the claims of exclusive locks on names, in order: AcquireAll(ctx, Names("a", "b"), nil).
func Names(names ...string) []Claim {
	claims := make([]Claim, len(names))
	for i, name := range names {
		claims[i] = Claim{Name: name}
	}
	return claims
}

// AcquireAll waits for every lock of claims at once, all or nothing (docs/multi-lock.md): granted
// together, one fencing token per name, and holding none of them while it waits. 1 to 16 distinct
// names, none of them held or waited for by opts.Owner; otherwise an *Error (invalid-argument or
// conflict) whose message names the field, e.g. acquire_all.locks[1].name. Waiting, opts.Wait, ctx
// and the client's own deadline (Wait + 1 s) work as for Acquire; a timeout's BlockedBy names the
// holders of every name it waited for (Blocker.Name), and a cancel withdraws the set from every name.
// A lock-delay in opts (WithLockDelay) is every hold's of the set; over 60 s it fails invalid-argument
// naming acquire_all.lock_delay.
func (c *Client) AcquireAll(ctx context.Context, claims []Claim, opts *AcquireOptions) (*LockSet, error) {
	return c.acquireAll(ctx, claims, opts, false)
}

// TryAcquireAll takes every lock of claims if each is free (or fits, for SHARED) right now; else it
// fails at once with an *Error of Reason busy naming a taken name. opts.Wait is ignored.
func (c *Client) TryAcquireAll(ctx context.Context, claims []Claim, opts *AcquireOptions) (*LockSet, error) {
	return c.acquireAll(ctx, claims, opts, true)
}

// WithLocks acquires claims (as AcquireAll), runs fn with a context also cancelled the moment any
// lock of the set may be lost, and releases the set. It returns fn's error; else the first loss of
// a lock of the set while fn ran; else the release's error.
func (c *Client) WithLocks(ctx context.Context, claims []Claim, fn func(ctx context.Context, set *LockSet) error, opts *AcquireOptions) error {
	set, err := c.AcquireAll(ctx, claims, opts)
	if err != nil {
		return err
	}
	// fn's context is the set's unit of work: acquires made with it take the set's owner.
	return runWhileHeld(c.WithOwner(ctx, set.Locks[0].Owner()), set, func(work context.Context) error { return fn(work, set) })
}

func (c *Client) acquireAll(ctx context.Context, claims []Claim, opts *AcquireOptions, try bool) (*LockSet, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Reason: ReasonCancelled, Message: "acquire of the set: " + err.Error(), Err: err}
	}
	locks, err := setClaims(claims)
	if err != nil {
		return nil, err
	}
	opts = opts.orDefault()
	held, err := askOnLiveSession(c, ctx, "", opts, try, func(s *session, owner string, left time.Duration, giveUp time.Time) ([]*Lock, error) {
		req := &pb.AcquireAll{Locks: locks, Owner: owner, Value: opts.Value}
		if opts.lockDelay != nil {
			req.LockDelay = durationpb.New(*opts.lockDelay)
		}
		return s.acquireSet(ctx, req, left, giveUp, opts.OnQueued)
	})
	if err != nil {
		return nil, err
	}
	return newLockSet(held), nil
}

// setClaims turns claims into the request's LockClaims; an unknown mode is refused before anything
// is sent (the coordinator checks the rest: count, duplicates, names, limits).
func setClaims(claims []Claim) ([]*pb.LockClaim, error) {
	locks := make([]*pb.LockClaim, len(claims))
	for i, claim := range claims {
		mode := pb.LockMode_LOCK_MODE_EXCLUSIVE
		switch claim.Mode {
		case "", ModeExclusive:
		case ModeShared:
			mode = pb.LockMode_LOCK_MODE_SHARED
		default:
			message := fmt.Sprintf("acquire_all.locks[%d].mode: %q is neither %q nor %q", i, claim.Mode, ModeExclusive, ModeShared)
			return nil, &Error{Reason: ReasonInvalidArgument, Name: claim.Name, Message: message}
		}
		locks[i] = &pb.LockClaim{Name: claim.Name, Mode: mode, Limit: claim.Limit}
	}
	return locks, nil
}

// LockSet is a set of locks granted together by AcquireAll: one ordinary *Lock per name, in the
// order they were asked for, each with its own fencing token, lease and Done, releasable alone.
type LockSet struct {
	// Locks are the set's locks in request order.
	Locks []*Lock
	// Tokens maps each name to its fencing token: pass each resource the token of its own name.
	Tokens map[string]uint64
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newLockSet(locks []*Lock) *LockSet {
	ctx, cancel := context.WithCancelCause(context.Background())
	set := &LockSet{Locks: locks, Tokens: make(map[string]uint64, len(locks)), ctx: ctx, cancel: cancel}
	for _, lock := range locks {
		set.Tokens[lock.name] = lock.token
		// Fires at once for a lock already done; costs no goroutine until then.
		context.AfterFunc(lock.Context(), func() { cancel(context.Cause(lock.Context())) })
	}
	return set
}

// Lock is the set's lock of name, or nil when the set has none of that name.
func (s *LockSet) Lock(name string) *Lock {
	for _, lock := range s.Locks {
		if lock.name == name {
			return lock
		}
	}
	return nil
}

// Done is closed as soon as any lock of the set stops being held (lost, or released).
func (s *LockSet) Done() <-chan struct{} { return s.ctx.Done() }

// Context is cancelled with Done; context.Cause says why (the first loss's *Error, or
// context.Canceled after a release). Derive the contexts of work that needs the whole set from it.
func (s *LockSet) Context() context.Context { return s.ctx }

// Err is nil while no lock of the set was lost; else the first lost lock's *Error (Reason lost).
func (s *LockSet) Err() error {
	for _, lock := range s.Locks {
		if err := lock.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Release releases every lock of the set still held (each as Lock.Release; released ones are
// skipped), all at once, and waits (bounded by ctx) for every answer. It returns the first error
// in request order: a lock's loss, or a refusal.
func (s *LockSet) Release(ctx context.Context) error {
	errs := make([]error, len(s.Locks))
	var wg sync.WaitGroup
	for i, lock := range s.Locks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = lock.Release(ctx)
		}()
	}
	wg.Wait()
	s.cancel(context.Canceled) // every lock's Done is closed by now: this only settles the set's
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
