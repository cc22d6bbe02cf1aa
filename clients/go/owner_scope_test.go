package turnstile_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// naiveTransfer is the two-account transfer as a new user writes it: no owner anywhere, the second
// account taken inside the first's WithLock with the fn's ctx. It reports "holding" once it holds
// from, waits for go, and returns "transferred" or the reason the second acquire failed.
func naiveTransfer(ctx context.Context, c *turnstile.Client, from, to string, wait time.Duration, holding chan<- struct{}, goOn <-chan struct{}) string {
	outcome := ""
	err := c.WithLock(ctx, from, func(ctx context.Context, _ *turnstile.Lock) error {
		holding <- struct{}{}
		<-goOn
		err := c.WithLock(ctx, to, func(context.Context, *turnstile.Lock) error { return nil }, &turnstile.AcquireOptions{Wait: wait})
		var e *turnstile.Error
		switch {
		case err == nil:
			outcome = "transferred"
		case errors.As(err, &e):
			outcome = "failed " + string(e.Reason)
		default:
			outcome = "failed " + err.Error()
		}
		return nil
	}, nil)
	if err != nil {
		return "first account: " + err.Error()
	}
	return outcome
}

// crossedTransfers runs a → b and b → a, each on its own client (its own session: what two
// processes would be to the coordinator; go test has no second process to run them in without
// re-running TestMain's Redis and coordinator), both holding their first account before either asks
// for the second. It returns the two outcomes, sorted.
func crossedTransfers(t *testing.T, opts turnstile.Options, wait time.Duration) []string {
	ctx := testContext(t)
	a, b := lockName(t)+"/a", lockName(t)+"/b"
	one := newClient(t, []string{shared.address}, opts)
	two := newClient(t, []string{shared.address}, opts)
	holding, goOn := make(chan struct{}, 2), make(chan struct{})
	outcomes := make(chan string, 2)
	go func() { outcomes <- naiveTransfer(ctx, one, a, b, wait, holding, goOn) }()
	go func() { outcomes <- naiveTransfer(ctx, two, b, a, wait, holding, goOn) }()
	receive(t, holding, "the first transfer holding its first account")
	receive(t, holding, "the second transfer holding its first account")
	close(goOn)
	got := []string{receive(t, outcomes, "a transfer's outcome"), receive(t, outcomes, "the other transfer's outcome")}
	sort.Strings(got)
	return got
}

// The naive transfer both ways round, with no owner passed: exactly one DEADLOCK, the other
// transfers (the second acquire takes the first lock's owner through the WithLock fn's ctx).
func TestNaiveTransferDeadlockIsDetected(t *testing.T) {
	requireTools(t)
	got := crossedTransfers(t, turnstile.Options{}, 10*time.Second)
	if want := []string{"failed deadlock", "transferred"}; got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
}

// Opted out (Options.OwnerPerAcquire), the same transfers are four nodes: no cycle is seen and both
// waits run out.
func TestNaiveTransferOwnerPerAcquireSeesNoDeadlock(t *testing.T) {
	requireTools(t)
	got := crossedTransfers(t, turnstile.Options{OwnerPerAcquire: true}, 1500*time.Millisecond)
	if got[0] != "failed timeout" || got[1] != "failed timeout" {
		t.Fatalf("outcomes %v, want both timeouts", got)
	}
}

// Re-entry follows the owner: WithLock of a name inside its own WithLock is a second hold of the
// same grant; WithOwner is an explicit scope; outside any scope acquires get their own owners.
func TestOwnerFollowsTheContext(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	c := newClient(t, []string{shared.address}, turnstile.Options{})
	name := lockName(t)
	err := c.WithLock(ctx, name, func(ctx context.Context, outer *turnstile.Lock) error {
		inner, err := c.TryAcquire(ctx, name, nil)
		if err != nil {
			return err
		}
		if inner.Owner() != outer.Owner() || inner.Token() != outer.Token() {
			t.Errorf("nested try-once: owner %q token %d, want the outer lock's %q %d", inner.Owner(), inner.Token(), outer.Owner(), outer.Token())
		}
		return inner.Release(ctx)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	job := c.WithOwner(ctx, "job-42")
	x, err := c.Acquire(job, name+"/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.Acquire(job, name+"/y", nil)
	if err != nil {
		t.Fatal(err)
	}
	free, err := c.Acquire(ctx, name+"/free", nil)
	if err != nil {
		t.Fatal(err)
	}
	if x.Owner() != "job-42" || y.Owner() != "job-42" || free.Owner() == "job-42" {
		t.Fatalf("owners %q %q %q, want job-42 twice and a fresh one", x.Owner(), y.Owner(), free.Owner())
	}
	for _, l := range []*turnstile.Lock{x, y, free} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
