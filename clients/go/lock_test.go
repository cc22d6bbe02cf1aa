package turnstile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

func TestAcquireAndReleaseHandOutIncreasingTokens(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	client := newClient(t, []string{shared.address}, turnstile.Options{})
	name := lockName(t)

	first, err := client.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Valid() || first.Err() != nil || !isOpen(first.Done()) {
		t.Fatalf("a fresh lock is not valid: valid=%v err=%v", first.Valid(), first.Err())
	}
	if _, err := client.TryAcquire(ctx, name, nil); !errors.Is(err, turnstile.ErrBusy) {
		t.Fatalf("TryAcquire of a held lock: %v, want busy", err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	closed(t, first.Done(), "Done after Release")
	if first.Err() != nil {
		t.Fatalf("a released lock is not lost: %v", first.Err())
	}
	if err := first.Release(ctx); err != nil {
		t.Fatalf("a second Release: %v", err)
	}
	second, err := client.TryAcquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Token() <= first.Token() {
		t.Fatalf("token %d after %d: fencing tokens must increase", second.Token(), first.Token())
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestTwoClientsHandOffInArrivalOrder(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	second := newClient(t, []string{shared.address}, turnstile.Options{})
	third := newClient(t, []string{shared.address}, turnstile.Options{})

	held, err := holder.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	type grant struct {
		who  string
		lock *turnstile.Lock
		err  error
	}
	grants := make(chan grant, 2)
	wait := func(who string, c *turnstile.Client) {
		opts, position := queued(turnstile.AcquireOptions{})
		go func() {
			lock, err := c.Acquire(ctx, name, opts)
			grants <- grant{who, lock, err}
		}()
		t.Logf("%s queued at position %d", who, receive(t, position, who+" queued"))
	}
	wait("second", second) // queued before third: it must be granted first
	wait("third", third)
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	g := receive(t, grants, "first grant")
	if g.err != nil || g.who != "second" {
		t.Fatalf("first grant after the release went to %s (%v), want second", g.who, g.err)
	}
	if g.lock.Token() <= held.Token() {
		t.Fatalf("hand-off token %d is not above %d", g.lock.Token(), held.Token())
	}
	select {
	case early := <-grants:
		t.Fatalf("%s was granted while second holds the lock", early.who)
	default:
	}
	if err := g.lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	g = receive(t, grants, "second grant")
	if g.err != nil || g.who != "third" {
		t.Fatalf("second grant went to %s (%v), want third", g.who, g.err)
	}
	_ = g.lock.Release(ctx)
}

func TestWaitTimeoutNamesTheBlockers(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	holder := newClient(t, []string{shared.address}, turnstile.Options{ClientName: "blocking-holder"})
	waiter := newClient(t, []string{shared.address}, turnstile.Options{})

	held, err := holder.Acquire(ctx, name, &turnstile.AcquireOptions{Owner: "holder-owner"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = waiter.Acquire(ctx, name, &turnstile.AcquireOptions{Wait: 300 * time.Millisecond})
	var e *turnstile.Error
	if !errors.As(err, &e) || !errors.Is(err, turnstile.ErrTimeout) {
		t.Fatalf("acquire behind a holder with a 300ms wait: %v, want a timeout *Error", err)
	}
	if len(e.BlockedBy) != 1 {
		t.Fatalf("blocked by %d holders, want 1: %+v", len(e.BlockedBy), e.BlockedBy)
	}
	b := e.BlockedBy[0]
	if b.ClientName != "blocking-holder" || b.Owner != "holder-owner" || b.FencingToken != held.Token() || b.SessionID != holder.SessionID() {
		t.Fatalf("blocker %+v does not name the holder (session %s, token %d)", b, holder.SessionID(), held.Token())
	}
	if !e.Retryable() || e.Name != name {
		t.Fatalf("timeout error: retryable=%v name=%q", e.Retryable(), e.Name)
	}
	t.Logf("error: %v", err)
}

func TestCancellingTheContextWithdrawsTheAcquire(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	waiter := newClient(t, []string{shared.address}, turnstile.Options{})
	bystander := newClient(t, []string{shared.address}, turnstile.Options{})

	held, err := holder.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	opts, position := queued(turnstile.AcquireOptions{})
	result := make(chan error, 1)
	go func() {
		_, err := waiter.Acquire(waitCtx, name, opts)
		result <- err
	}()
	receive(t, position, "queued")
	cancel()
	err = receive(t, result, "the cancelled acquire's return")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, turnstile.ErrCancelled) {
		t.Fatalf("cancelled acquire: %v, want cancelled wrapping context.Canceled", err)
	}
	// The waiter left the queue: once the holder releases, nobody waits, so a try-once succeeds.
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := bystander.TryAcquire(ctx, name, nil)
	if err != nil {
		t.Fatalf("try-once after the cancelled waiter and the release: %v (the cancelled acquire still queued?)", err)
	}
	_ = next.Release(ctx)
}

func TestWithLockReleasesAndReentryCountsHolds(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	client := newClient(t, []string{shared.address}, turnstile.Options{})
	other := newClient(t, []string{shared.address}, turnstile.Options{})

	var token uint64
	err := client.WithLock(ctx, name, func(ctx context.Context, lock *turnstile.Lock) error {
		token = lock.Token()
		again, err := client.Acquire(ctx, name, &turnstile.AcquireOptions{Owner: lock.Owner()})
		if err != nil {
			return err
		}
		if again != lock || lock.HoldCount() != 2 {
			t.Errorf("re-entry: same handle %v, hold count %d; want the same lock with 2 holds", again == lock, lock.HoldCount())
		}
		if err := again.Release(ctx); err != nil {
			return err
		}
		if !isOpen(lock.Done()) {
			t.Error("dropping one of two holds closed Done")
		}
		if _, err := other.TryAcquire(ctx, name, nil); !errors.Is(err, turnstile.ErrBusy) {
			t.Errorf("TryAcquire while one hold is left: %v, want busy", err)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	after, err := other.TryAcquire(ctx, name, nil)
	if err != nil {
		t.Fatalf("TryAcquire after WithLock returned: %v", err)
	}
	if after.Token() <= token {
		t.Fatalf("token %d after %d", after.Token(), token)
	}
	_ = after.Release(ctx)
}
