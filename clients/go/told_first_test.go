package turnstile_test

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// A holder whose session is frozen (its connection stalls: no keepalive reaches the coordinator,
// no ack comes back) is told by its own lease clock that the lock may be lost — Done closes —
// before the coordinator's lease ends and the waiter behind it is granted.
func TestFrozenSessionIsToldFirst(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	proxy := newFreezingProxy(t, shared.address)
	const ttl = 5 * time.Second // margin 500 ms: the slack a loaded machine's late timer has
	holder := newClient(t, []string{proxy.address()}, turnstile.Options{TTL: ttl})
	waiter := newClient(t, []string{shared.address}, turnstile.Options{})

	held, err := holder.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts, position := queued(turnstile.AcquireOptions{})
	type grant struct {
		lock *turnstile.Lock
		err  error
		at   time.Time
	}
	granted := make(chan grant, 1)
	go func() {
		lock, err := waiter.Acquire(ctx, name, opts)
		granted <- grant{lock, err, time.Now()}
	}()
	receive(t, position, "the waiter queued")

	frozenAt := time.Now()
	proxy.Freeze()
	closed(t, held.Done(), "Done of the frozen holder's lock")
	toldAt := time.Now()
	select {
	case g := <-granted:
		t.Fatalf("the waiter was granted (%v) before the frozen holder was told", g.err)
	default:
	}
	var e *turnstile.Error
	if !errors.As(held.Err(), &e) || e.Reason != turnstile.ReasonLost || e.LostReason != turnstile.LostLeaseUnconfirmed {
		t.Fatalf("frozen holder's Err: %v, want lost (lease-unconfirmed)", held.Err())
	}
	if held.Valid() {
		t.Fatal("a lock past its local deadline still reports Valid")
	}
	g := receive(t, granted, "the waiter's grant")
	if g.err != nil {
		t.Fatal(g.err)
	}
	if !toldAt.Before(g.at) {
		t.Fatalf("told at %v, waiter granted at %v: the holder was not told first", toldAt, g.at)
	}
	if g.lock.Token() <= held.Token() {
		t.Fatalf("waiter's token %d is not above the lost holder's %d", g.lock.Token(), held.Token())
	}
	t.Logf("ttl %s: told %s after the freeze, %s before the waiter's grant arrived",
		ttl, toldAt.Sub(frozenAt).Round(time.Millisecond), g.at.Sub(toldAt).Round(time.Millisecond))
	_ = g.lock.Release(ctx)
	proxy.Close() // the holder's stream breaks now, so its Close need not wait for a frozen one
	for _, c := range []*turnstile.Client{holder, waiter} {
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitForNoClientGoroutines(t) // nothing of the frozen session, its lease timer or its resume attempts is left
}

// An operator's Revoke takes the hold away: the coordinator sends `lost{REVOKED}` and the lock's
// Done closes with that reason; the lock is handed to the waiter.
func TestRevokedLockIsLost(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	held, err := holder.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(shared.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	revoked, err := pb.NewLockServiceClient(conn).Revoke(ctx, &pb.RevokeRequest{Name: name, SessionId: holder.SessionID(), Owner: held.Owner()})
	if err != nil {
		t.Fatal(err)
	}
	if revoked.GetFencingToken() != held.Token() {
		t.Fatalf("revoked token %d, held %d", revoked.GetFencingToken(), held.Token())
	}
	closed(t, held.Done(), "Done of the revoked lock")
	var e *turnstile.Error
	if !errors.As(held.Err(), &e) || e.LostReason != turnstile.LostRevoked || e.Token != held.Token() {
		t.Fatalf("revoked lock's Err: %v, want lost (revoked)", held.Err())
	}
	if !errors.Is(held.Release(ctx), turnstile.ErrLost) {
		t.Fatal("Release of a revoked lock does not report the loss")
	}
}
