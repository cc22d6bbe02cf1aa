package turnstile_test

import (
	"context"
	"runtime"
	"testing"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// After Close, nothing the client started still runs: not the session's receive and keepalive
// loops, not a lock's lease timer, not an Observe, not an acquire that was waiting, not grpc-go's
// connections.
func TestCloseLeavesNoGoroutineBehind(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	// grpc-go starts a few process-wide goroutines on first use: let them exist before counting.
	warm := newClient(t, []string{shared.address}, turnstile.Options{})
	if l, err := warm.Acquire(ctx, name+"/warm", nil); err == nil {
		_ = l.Release(ctx)
	}
	_ = warm.Close(ctx)
	before := runtime.NumGoroutine()

	holder, err := turnstile.NewClient([]string{shared.address}, turnstile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	waiter, err := turnstile.NewClient([]string{shared.address}, turnstile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	held, err := holder.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.WithLock(ctx, name+"/other", func(context.Context, *turnstile.Lock) error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	observed := waiter.Election(name).Observe(ctx) // stopped by Close, not by ctx
	receive(t, observed, "the observed leader")
	opts, position := queued(turnstile.AcquireOptions{})
	waiting := make(chan error, 1)
	go func() {
		_, err := waiter.Acquire(ctx, name, opts)
		waiting <- err
	}()
	receive(t, position, "the waiter queued")
	if runtime.NumGoroutine() <= before {
		t.Fatal("the clients run no goroutines: the count proves nothing")
	}
	during := runtime.NumGoroutine()
	if len(clientGoroutines()) == 0 {
		t.Fatal("no goroutine of the client found by its stack: waitForNoClientGoroutines would prove nothing")
	}

	if err := waiter.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, waiting, "the waiting acquire's end"); reason(err) != turnstile.ReasonSessionEnded {
		t.Fatalf("an acquire waiting when its client closed: %v, want session-ended", err)
	}
	for range observed { // closed by Close
	}
	if err := holder.Close(ctx); err != nil {
		t.Fatal(err)
	}
	closed(t, held.Done(), "Done of a lock held at Close")
	waitForGoroutines(t, before)
	waitForNoClientGoroutines(t)
	t.Logf("goroutines: %d before the clients, %d while in use, %d after Close", before, during, runtime.NumGoroutine())
}
