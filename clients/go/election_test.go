package turnstile_test

import (
	"context"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// nextLeader reads leaders from observed until one with value want (nil: no leader) arrives.
func nextLeader(t *testing.T, observed <-chan *turnstile.Leader, want string) *turnstile.Leader {
	t.Helper()
	timeout := time.After(eventually)
	for {
		var leader *turnstile.Leader
		var ok bool
		select {
		case leader, ok = <-observed:
		case <-timeout:
			t.Fatalf("no leader %q observed within %s", want, eventually)
		}
		if !ok {
			t.Fatalf("Observe ended while waiting for leader %q", want)
		}
		if (want == "" && leader == nil) || (leader != nil && string(leader.Value) == want) {
			return leader
		}
	}
}

func TestElectionHandsOverAndObserveFollows(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	alpha := newClient(t, []string{shared.address}, turnstile.Options{})
	beta := newClient(t, []string{shared.address}, turnstile.Options{})
	watcher := newClient(t, []string{shared.address}, turnstile.Options{})

	observeCtx, stopObserving := context.WithCancel(ctx)
	defer stopObserving()
	observed := watcher.Election(name).Observe(observeCtx)
	nextLeader(t, observed, "") // nobody leads yet

	leading, err := alpha.Election(name).Campaign(ctx, []byte("alpha:1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := nextLeader(t, observed, "alpha:1")
	if seen.Token != leading.Token() || seen.SessionID != alpha.SessionID() {
		t.Fatalf("observed %+v, want alpha's session %s and token %d", seen, alpha.SessionID(), leading.Token())
	}
	opts, position := queued(turnstile.AcquireOptions{})
	elected := make(chan *turnstile.Leadership, 1)
	go func() {
		l, err := beta.Election(name).Campaign(ctx, []byte("beta"), opts)
		if err != nil {
			t.Error(err)
		}
		elected <- l
	}()
	receive(t, position, "beta's campaign queued")
	if err := leading.Proclaim(ctx, []byte("alpha:2")); err != nil {
		t.Fatal(err)
	}
	nextLeader(t, observed, "alpha:2")
	if now, err := beta.Election(name).Leader(ctx); err != nil || now == nil || string(now.Value) != "alpha:2" {
		t.Fatalf("Leader() = %+v, %v; want alpha:2", now, err)
	}
	if err := leading.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := leading.Proclaim(ctx, []byte("alpha:3")); reason(err) != turnstile.ReasonNotHeld {
		t.Fatalf("proclaim after resigning: %v, want not-held", err)
	}
	successor := receive(t, elected, "beta's election")
	if successor == nil {
		t.FailNow()
	}
	seen = nextLeader(t, observed, "beta")
	if seen.Token != successor.Token() || successor.Token() <= leading.Token() {
		t.Fatalf("beta leads with token %d (observed %d) after alpha's %d", successor.Token(), seen.Token, leading.Token())
	}
	if err := successor.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	nextLeader(t, observed, "")
	stopObserving()
	for range observed { // the channel is closed once Observe stops
	}
}
