package turnstile_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// The Go client's hand-over API (docs/elections.md) against the shared coordinator.

func TestHandOverTransferToNamedWaiter(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	waiter := newClient(t, []string{shared.address}, turnstile.Options{})
	held, err := holder.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts, position := queued(turnstile.AcquireOptions{Owner: "next"})
	granted := make(chan *turnstile.Lock, 1)
	go func() {
		l, err := waiter.Acquire(ctx, name, opts)
		if err != nil {
			t.Error(err)
		}
		granted <- l
	}()
	receive(t, position, "the successor's queued position")
	successor, err := held.Transfer(ctx, waiter.SessionID(), "next")
	if err != nil {
		t.Fatal(err)
	}
	next := receive(t, granted, "the successor's grant")
	if successor.SessionID != waiter.SessionID() || successor.Owner != "next" || successor.Token != next.Token() {
		t.Fatalf("successor %+v, want session %s owner next token %d", successor, waiter.SessionID(), next.Token())
	}
	if next.Token() <= held.Token() {
		t.Fatalf("successor token %d not above %d", next.Token(), held.Token())
	}
	closed(t, held.Done(), "the old holder's Done")
	if held.Err() != nil || held.Valid() {
		t.Fatalf("the old holder: Err %v, Valid %v; want released, not lost", held.Err(), held.Valid())
	}
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestHandOverTransferNotWaitingNamesWaiters(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	waiter := newClient(t, []string{shared.address}, turnstile.Options{})
	held, err := holder.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts, position := queued(turnstile.AcquireOptions{Owner: "w"})
	go func() { _, _ = waiter.Acquire(ctx, name, opts) }()
	receive(t, position, "the waiter's queued position")
	_, err = held.Transfer(ctx, "0123456789abcdef0123456789abcdef", "")
	if !errors.Is(err, turnstile.ErrNotFound) || !strings.Contains(err.Error(), `owner "w"`) {
		t.Fatalf("Transfer to a session not waiting: %v; want not-found naming owner \"w\"", err)
	}
	if !held.Valid() {
		t.Fatal("the holder lost the lock after a refused transfer")
	}
}

func TestHandOverReleaseRequestReachesHolder(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	asker := newClient(t, []string{shared.address}, turnstile.Options{})
	held, err := holder.Acquire(ctx, name, &turnstile.AcquireOptions{Owner: "h"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := asker.RequestRelease(ctx, name, "deploy")
	if err != nil || n != 1 {
		t.Fatalf("RequestRelease = %d, %v; want 1 holder asked", n, err)
	}
	got := receive(t, held.ReleaseRequests(), "the release request")
	want := turnstile.ReleaseRequest{Name: name, Owner: "h", Requester: "session " + asker.SessionID(), Reason: "deploy", SessionID: asker.SessionID()}
	if got != want {
		t.Fatalf("release request %+v, want %+v", got, want)
	}
	if !held.Valid() {
		t.Fatal("a release request took the lock away; nothing is enforced")
	}
	if _, err := asker.RequestRelease(ctx, name+"/nobody", ""); !errors.Is(err, turnstile.ErrNotFound) {
		t.Fatalf("RequestRelease of a lock nobody holds: %v; want not-found", err)
	}
}

func TestHandOverRecipeHigherPriorityAskToYield(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	old := newClient(t, []string{shared.address}, turnstile.Options{})
	oldPod := newClient(t, []string{shared.address}, turnstile.Options{})
	newPod := newClient(t, []string{shared.address}, turnstile.Options{})
	watcher := newClient(t, []string{shared.address}, turnstile.Options{})
	observeCtx, stopObserving := context.WithCancel(ctx)
	defer stopObserving()
	observed := watcher.Election(name).Observe(observeCtx)
	leading, err := old.Election(name).Campaign(ctx, []byte("old"), nil)
	if err != nil {
		t.Fatal(err)
	}
	nextLeader(t, observed, "old")
	queuedFirst, position := queued(turnstile.AcquireOptions{})
	go func() { _, _ = oldPod.Election(name).Campaign(ctx, []byte("other"), queuedFirst) }()
	receive(t, position, "the other old pod queued")
	elected := make(chan *turnstile.Leadership, 1)
	go func() {
		l, err := newPod.Election(name).Campaign(ctx, []byte("new"), &turnstile.AcquireOptions{Priority: 10, AskToYield: "new version"})
		if err != nil {
			t.Error(err)
		}
		elected <- l
	}()
	request := receive(t, leading.ReleaseRequests(), "the request to yield")
	if request.Reason != "new version" || request.SessionID != newPod.SessionID() {
		t.Fatalf("request %+v, want reason \"new version\" from %s", request, newPod.SessionID())
	}
	if _, err := leading.HandOver(ctx, request.SessionID); err != nil {
		t.Fatal(err)
	}
	leader := receive(t, elected, "the new leader")
	if leader.Token() <= leading.Token() {
		t.Fatalf("new leader token %d not above %d", leader.Token(), leading.Token())
	}
	// Straight from old to new: the observer reports no leaderless moment in between.
	if seen := receive(t, observed, "the next leader"); seen == nil || string(seen.Value) != "new" {
		t.Fatalf("after the hand-over the observer saw %+v, want the new leader", seen)
	}
	_ = leader.Resign(ctx)
}
