package turnstile_test

import (
	"syscall"
	"testing"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// A coordinator that drains (SIGTERM) ends its streams UNAVAILABLE: the client resumes the same
// session on the next address, keeping its lock (same token, Done never closed) and its place in
// a queue, and releases it there.
func TestResumeOnTheOtherCoordinatorAfterADrain(t *testing.T) {
	resumeAcross(t, func(t *testing.T, c *coordinator) {
		if !c.signal(syscall.SIGTERM, eventually) {
			t.Fatal("the drained coordinator did not exit after SIGTERM")
		}
		if c.exitCode() != 0 {
			t.Fatalf("drained coordinator exit code %d; output:\n%s", c.exitCode(), c.output())
		}
	})
}

// A coordinator that dies without a word (SIGKILL) looks the same to the client, from the broken
// connection: it resumes on the other one within the lease.
func TestResumeOnTheOtherCoordinatorAfterACrash(t *testing.T) {
	resumeAcross(t, func(t *testing.T, c *coordinator) { c.kill() })
}

// resumeAcross holds a lock and queues a second acquire on one coordinator, applies fault to it,
// and checks the session goes on on the other with both.
func resumeAcross(t *testing.T, fault func(*testing.T, *coordinator)) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	drained := newCoordinator(t)
	survivor := newCoordinator(t)
	events := make(chan turnstile.Event, 32)
	client := newClient(t, []string{drained.address, survivor.address}, turnstile.Options{
		OnEvent: func(e turnstile.Event) { events <- e },
	})
	rival := newClient(t, []string{survivor.address}, turnstile.Options{})

	lock, err := client.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := receive(t, events, "connected event"); e.Kind != turnstile.EventConnected || e.Address != drained.address {
		t.Fatalf("first event %+v, want connected to %s", e, drained.address)
	}
	sessionID := client.SessionID()
	// A second acquire of the same client waits in the queue across the drain.
	opts, position := queued(turnstile.AcquireOptions{})
	second := make(chan *turnstile.Lock, 1)
	go func() {
		l, err := client.Acquire(ctx, name, opts)
		if err != nil {
			t.Errorf("queued acquire across the drain: %v", err)
		}
		second <- l
	}()
	receive(t, position, "the second acquire queued")

	fault(t, drained)
	var resumed turnstile.Event
	for resumed.Kind != turnstile.EventResumed {
		resumed = receive(t, events, "resumed event")
		if resumed.Kind == turnstile.EventExpired {
			t.Fatalf("the session expired instead of resuming: %v", resumed.Err)
		}
	}
	if resumed.Address != survivor.address || resumed.Held != 1 || resumed.SessionID != sessionID {
		t.Fatalf("resumed %+v, want session %s on %s with 1 lock", resumed, sessionID, survivor.address)
	}
	if !isOpen(lock.Done()) || lock.Err() != nil || !lock.Valid() {
		t.Fatalf("the lock did not survive the resume: err=%v", lock.Err())
	}
	if _, err := rival.TryAcquire(ctx, name, nil); reason(err) != turnstile.ReasonBusy {
		t.Fatalf("a rival took the resumed lock: %v", err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatalf("release on the survivor: %v", err)
	}
	next := receive(t, second, "the queued acquire's grant")
	if next == nil {
		t.FailNow()
	}
	if next.Token() <= lock.Token() {
		t.Fatalf("token %d after %d", next.Token(), lock.Token())
	}
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("session %s resumed on %s with its lock (token %d) and its queued acquire", sessionID, survivor.address, lock.Token())
	// Nothing of the broken stream or the resume outlives Close.
	for _, c := range []*turnstile.Client{client, rival} {
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitForNoClientGoroutines(t)
}
