package turnstile_test

import (
	"errors"
	"testing"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

func TestSemaphoreAdmitsAtMostItsLimit(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	a := newClient(t, []string{shared.address}, turnstile.Options{})
	b := newClient(t, []string{shared.address}, turnstile.Options{})
	c := newClient(t, []string{shared.address}, turnstile.Options{})

	first, err := a.Semaphore(name, 2).Acquire(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Semaphore(name, 2).Acquire(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Token() == second.Token() {
		t.Fatal("two permits share a fencing token")
	}
	if _, err := c.Semaphore(name, 2).TryAcquire(ctx, nil); !errors.Is(err, turnstile.ErrBusy) {
		t.Fatalf("a third permit of 2: %v, want busy", err)
	}
	if _, err := c.Semaphore(name, 3).TryAcquire(ctx, nil); !errors.Is(err, turnstile.ErrConflict) {
		t.Fatalf("another limit while 2 is in force: %v, want conflict", err)
	}
	if _, err := c.Semaphore(name, 0).Acquire(ctx, nil); !errors.Is(err, turnstile.ErrInvalidArgument) {
		t.Fatalf("limit 0: %v, want invalid-argument", err)
	}
	opts, position := queued(turnstile.AcquireOptions{})
	third := make(chan *turnstile.Lock, 1)
	go func() {
		permit, err := c.Semaphore(name, 2).Acquire(ctx, opts)
		if err != nil {
			t.Error(err)
		}
		third <- permit
	}()
	receive(t, position, "the third permit queued")
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	permit := receive(t, third, "the third permit")
	if permit == nil {
		t.FailNow()
	}
	if !isOpen(second.Done()) {
		t.Fatal("a release of one permit touched another")
	}
	for _, l := range []*turnstile.Lock{second, permit} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadersShareAndAWriterWaitsForThem(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	a := newClient(t, []string{shared.address}, turnstile.Options{})
	b := newClient(t, []string{shared.address}, turnstile.Options{})

	r1, err := a.ReadWriteLock(name).Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.ReadWriteLock(name).TryRead(ctx, nil)
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	if _, err := b.ReadWriteLock(name).TryWrite(ctx, nil); !errors.Is(err, turnstile.ErrBusy) {
		t.Fatalf("a writer while two read: %v, want busy", err)
	}
	_ = r1.Release(ctx)
	_ = r2.Release(ctx)
	w, err := b.ReadWriteLock(name).TryWrite(ctx, nil)
	if err != nil {
		t.Fatalf("a writer once the readers left: %v", err)
	}
	if w.Token() <= r2.Token() || w.Token() <= r1.Token() {
		t.Fatal("the writer's token is not above the readers'")
	}
	_ = w.Release(ctx)
}
