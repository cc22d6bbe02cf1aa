package turnstile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// Two clients take x and y in opposite orders under one owner each: the younger wait fails with
// ReasonDeadlock naming the cycle, the other is granted once the victim's holder lets go.
func TestACycleFailsTheYoungestWaitWithTheCycle(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	x, y := lockName(t)+"/x", lockName(t)+"/y"
	a := newClient(t, []string{shared.address}, turnstile.Options{ClientName: "worker-a"})
	b := newClient(t, []string{shared.address}, turnstile.Options{ClientName: "worker-b"})
	if _, err := a.Acquire(ctx, x, &turnstile.AcquireOptions{Owner: "oa"}); err != nil {
		t.Fatal(err)
	}
	yHeld, err := b.Acquire(ctx, y, &turnstile.AcquireOptions{Owner: "ob"})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		lock *turnstile.Lock
		err  error
	}
	aDone, bDone := make(chan result, 1), make(chan result, 1)
	aOpts, aQueued := queued(turnstile.AcquireOptions{Owner: "oa"})
	go func() { l, err := a.Acquire(ctx, y, aOpts); aDone <- result{l, err} }()
	receive(t, aQueued, "a's wait for y queued")
	bOpts, bQueued := queued(turnstile.AcquireOptions{Owner: "ob"})
	go func() { l, err := b.Acquire(ctx, x, bOpts); bDone <- result{l, err} }()
	receive(t, bQueued, "b's wait for x queued")

	var r result
	select {
	case r = <-bDone:
	case <-time.After(3 * time.Second):
		t.Fatal("the cycle was not found within 3 s")
	}
	var e *turnstile.Error
	if !errors.As(r.err, &e) || !errors.Is(r.err, turnstile.ErrDeadlock) {
		t.Fatalf("b's acquire of x: %v, want a deadlock *Error", r.err)
	}
	if len(e.DeadlockCycle) != 2 || e.Retryable() {
		t.Fatalf("cycle %+v (retryable %v), want 2 steps, not retryable", e.DeadlockCycle, e.Retryable())
	}
	first, second := e.DeadlockCycle[0], e.DeadlockCycle[1]
	if first.Owner != "ob" || first.ClientName != "worker-b" || first.Name != x || first.SessionID != b.SessionID() {
		t.Fatalf("first step %+v is not b's wait for x", first)
	}
	if second.Owner != "oa" || second.ClientName != "worker-a" || second.Name != y || second.SessionID != a.SessionID() {
		t.Fatalf("second step %+v is not a's wait for y", second)
	}
	if !strings.Contains(e.Error(), "deadlock: (") {
		t.Fatalf("message %q does not name the cycle", e.Error())
	}
	select {
	case early := <-aDone:
		t.Fatalf("a's wait ended while b still holds y: %v", early.err)
	default:
	}
	if err := yHeld.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r = receive(t, aDone, "a granted y")
	if r.err != nil {
		t.Fatalf("a's acquire of y after b let go: %v", r.err)
	}
	t.Logf("error: %v", e)
}
