package turnstile_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

func TestAWaitingSetHoldsNoneAndIsGrantedWhenItsLastBusyNameIsReleased(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	x, y := lockName(t)+"/x", lockName(t)+"/y"
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	setClient := newClient(t, []string{shared.address}, turnstile.Options{})
	other := newClient(t, []string{shared.address}, turnstile.Options{})

	yHeld, err := holder.Acquire(ctx, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := acquireAllQueued(t, ctx, setClient, turnstile.Names(x, y), turnstile.AcquireOptions{})
	if d := describe(t, ctx, x); len(d.Holders) != 0 || len(d.Waiters) != 1 {
		t.Fatalf("x while the set waits: %d holders, %d waiters; want none held, the set waiting", len(d.Holders), len(d.Waiters))
	}
	// The set holds none of its names: another client takes the free one at once.
	xHeld, err := other.TryAcquire(ctx, x, nil)
	if err != nil {
		t.Fatalf("another client's TryAcquire of x, free while the set waits: %v", err)
	}
	if err := yHeld.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if d := describe(t, ctx, y); len(d.Holders) != 0 || len(d.Waiters) != 1 {
		t.Fatalf("y freed while x is busy: %d holders, %d waiters; want the set still waiting, holding none", len(d.Holders), len(d.Waiters))
	}
	select {
	case r := <-done:
		t.Fatalf("the set ended while x was held: %v", r.err)
	default:
	}
	if err := xHeld.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := receive(t, done, "the set granted once x, its last busy name, was released")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.set.Tokens[x] <= xHeld.Token() || r.set.Tokens[y] <= yHeld.Token() {
		t.Fatalf("tokens %v after x=%d, y=%d", r.set.Tokens, xHeld.Token(), yHeld.Token())
	}
	if err := r.set.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestTryAcquireAllOfASetWithATakenNameIsBusyAndTakesNothing(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	x, y := lockName(t)+"/x", lockName(t)+"/y"
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	client := newClient(t, []string{shared.address}, turnstile.Options{})
	if _, err := holder.Acquire(ctx, y, nil); err != nil {
		t.Fatal(err)
	}
	_, err := client.TryAcquireAll(ctx, turnstile.Names(x, y), nil)
	var e *turnstile.Error
	if !errors.As(err, &e) || !errors.Is(err, turnstile.ErrBusy) || !strings.Contains(e.Message, y) {
		t.Fatalf("TryAcquireAll with y taken: %v, want busy naming %q", err, y)
	}
	if d := describe(t, ctx, x); len(d.Holders) != 0 || len(d.Waiters) != 0 {
		t.Fatalf("x after the busy try: %d holders, %d waiters; want nothing", len(d.Holders), len(d.Waiters))
	}
}

func TestASetWhoseWaitRunsOutNamesTheBlockersOfEveryName(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	x, y, z := lockName(t)+"/x", lockName(t)+"/y", lockName(t)+"/z"
	holdsX := newClient(t, []string{shared.address}, turnstile.Options{ClientName: "holds-x"})
	holdsY := newClient(t, []string{shared.address}, turnstile.Options{ClientName: "holds-y"})
	client := newClient(t, []string{shared.address}, turnstile.Options{})
	if _, err := holdsX.Acquire(ctx, x, &turnstile.AcquireOptions{Owner: "ox"}); err != nil {
		t.Fatal(err)
	}
	if _, err := holdsY.Acquire(ctx, y, &turnstile.AcquireOptions{Owner: "oy"}); err != nil {
		t.Fatal(err)
	}
	_, err := client.AcquireAll(ctx, turnstile.Names(x, y, z), &turnstile.AcquireOptions{Wait: 300 * time.Millisecond})
	var e *turnstile.Error
	if !errors.As(err, &e) || !errors.Is(err, turnstile.ErrTimeout) {
		t.Fatalf("AcquireAll with x and y held: %v, want a timeout", err)
	}
	byName := map[string]turnstile.Blocker{}
	for _, b := range e.BlockedBy {
		byName[b.Name] = b
	}
	if len(e.BlockedBy) != 2 || byName[x].Owner != "ox" || byName[x].ClientName != "holds-x" ||
		byName[y].Owner != "oy" || byName[y].ClientName != "holds-y" {
		t.Fatalf("blocked by %+v, want x's holder ox and y's holder oy", e.BlockedBy)
	}
	for _, name := range []string{x, y, z} {
		if d := describe(t, ctx, name); len(d.Waiters) != 0 {
			t.Fatalf("%q keeps %d waiters after the timeout, want the set withdrawn", name, len(d.Waiters))
		}
	}
	t.Logf("error: %v", e)
}

func TestCancellingAWaitingSetWithdrawsItFromEveryName(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	x, y := lockName(t)+"/x", lockName(t)+"/y"
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	client := newClient(t, []string{shared.address}, turnstile.Options{})
	yHeld, err := holder.Acquire(ctx, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	setCtx, cancel := context.WithCancel(ctx)
	done := acquireAllQueued(t, setCtx, client, turnstile.Names(x, y), turnstile.AcquireOptions{})
	cancel()
	r := receive(t, done, "the cancelled set")
	if !errors.Is(r.err, turnstile.ErrCancelled) || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled AcquireAll: %v, want cancelled wrapping context.Canceled", r.err)
	}
	for _, name := range []string{x, y} {
		if d := describe(t, ctx, name); len(d.Waiters) != 0 {
			t.Fatalf("%q keeps %d waiters after the cancel, want the set withdrawn", name, len(d.Waiters))
		}
	}
	if err := yHeld.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if d := describe(t, ctx, x); len(d.Holders) != 0 {
		t.Fatalf("x is held after y was freed: the withdrawn set was granted")
	}
}

// A set waiting on a coordinator that drains is sent again (same request id, what is left of its
// wait) on the one the session resumes on, and granted there when its busy name frees.
func TestAWaitingSetGoesOnAfterTheSessionResumes(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	x, y := lockName(t)+"/x", lockName(t)+"/y"
	drained := newCoordinator(t)
	survivor := newCoordinator(t)
	events := make(chan turnstile.Event, 32)
	client := newClient(t, []string{drained.address, survivor.address}, turnstile.Options{
		OnEvent: func(e turnstile.Event) { events <- e },
	})
	holder := newClient(t, []string{survivor.address}, turnstile.Options{})
	yHeld, err := holder.Acquire(ctx, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := acquireAllQueued(t, ctx, client, turnstile.Names(x, y), turnstile.AcquireOptions{Wait: eventually / 2})
	if !drained.signal(syscall.SIGTERM, eventually) {
		t.Fatal("the drained coordinator did not exit after SIGTERM")
	}
	for e := receive(t, events, "an event"); e.Kind != turnstile.EventResumed; e = receive(t, events, "resumed event") {
		if e.Kind == turnstile.EventExpired {
			t.Fatalf("the session expired instead of resuming: %v", e.Err)
		}
	}
	if err := yHeld.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := receive(t, done, "the set granted after the resume")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.set.Tokens[y] <= yHeld.Token() || !isOpen(r.set.Done()) {
		t.Fatalf("set %v after y's token %d (done: %v)", r.set.Tokens, yHeld.Token(), !isOpen(r.set.Done()))
	}
	if err := r.set.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
