package turnstile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// The ctx of a call bounds it while another call's open is in progress: the session opens outside
// the client's lock, and other callers wait for it or for their own ctx.

// shortCtx is the ctx of the calls that must not wait behind the open; the open hangs for the
// client's open bound (5 s per address) on a coordinator that accepts and never answers.
const shortCtx = 100 * time.Millisecond

// startOpener starts an Acquire (no ctx bound) that opens the client's session on the silent
// listener, and returns once the listener accepted its connection (the open is in progress).
func startOpener(t *testing.T) (*turnstile.Client, *acquireRun) {
	t.Helper()
	accepted := make(chan struct{}, 1)
	address := silentListenerTelling(t, accepted)
	c := newClient(t, []string{address}, turnstile.Options{})
	opener := startAcquire(func() (*turnstile.Lock, error) { return c.Acquire(context.Background(), lockName(t)+"-opener", nil) })
	receive(t, accepted, "the opener's connection to the silent listener")
	return c, opener
}

// An Acquire with a short ctx, made while another Acquire's open hangs, returns with its ctx's
// error while that open is still in progress (it used to wait for the open to fail, ~5 s).
func TestAcquireCtxBoundsTheWaitForAnotherCallsOpen(t *testing.T) {
	c, opener := startOpener(t)
	ctx, cancel := context.WithTimeout(context.Background(), shortCtx)
	defer cancel()
	run := startAcquire(func() (*turnstile.Lock, error) { return c.Acquire(ctx, lockName(t), nil) })
	err, took := run.end(t, eventually)
	if reason(err) != turnstile.ReasonCancelled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the short-ctx acquire ended with %v, want cancelled wrapping its ctx's deadline", err)
	}
	select {
	case e := <-opener.ended:
		t.Fatalf("the short-ctx acquire returned (after %s) only once the open it waited behind had ended (%v)", took, e.err)
	default:
	}
	t.Logf("the short-ctx acquire returned after %s, the open still in progress: %v", took.Round(time.Millisecond), err)
}

// Close with a short ctx, made while an Acquire's open hangs, returns within its ctx: it ends the
// open (whose session would be nobody's) instead of waiting behind it, and the opener fails with
// the client closed (it used to wait for the open to fail, ~5 s, and the opener to fail with no answer).
func TestCloseCtxBoundsTheWaitForAnotherCallsOpen(t *testing.T) {
	c, opener := startOpener(t)
	ctx, cancel := context.WithTimeout(context.Background(), shortCtx)
	defer cancel()
	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- c.Close(ctx) }()
	err := receive(t, closed, "Close's return")
	took := time.Since(start)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close returned %v, want nil or its ctx's deadline", err)
	}
	if ctx.Err() == nil && err != nil {
		t.Fatalf("Close returned %v before its ctx ended", err)
	}
	openerErr, _ := opener.end(t, eventually)
	if reason(openerErr) != turnstile.ReasonSessionEnded {
		t.Fatalf("the opener ended with %v, want session-ended (client closed): Close waited behind its open", openerErr)
	}
	if _, err := c.Acquire(context.Background(), lockName(t), nil); reason(err) != turnstile.ReasonSessionEnded {
		t.Fatalf("an acquire after Close: %v, want session-ended", err)
	}
	t.Logf("Close returned after %s (%v); the opener: %v", took.Round(time.Millisecond), err, openerErr)
}
