package turnstile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// A hold acquired WithLockDelay and then revoked (it ended without a release): a try-once is busy
// during the delay, Describe shows it, and a waiter is granted once it has passed, not before.
func TestWithLockDelayDelaysTheLockAfterARevoke(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	const delay = 800 * time.Millisecond
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	other := newClient(t, []string{shared.address}, turnstile.Options{})
	held, err := holder.Acquire(ctx, name, (&turnstile.AcquireOptions{Owner: "h"}).WithLockDelay(delay))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(shared.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpc := pb.NewLockServiceClient(conn)
	revokedAt := time.Now()
	if _, err := rpc.Revoke(ctx, &pb.RevokeRequest{Name: name, SessionId: holder.SessionID(), Owner: held.Owner()}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.TryAcquire(ctx, name, nil); !errors.Is(err, turnstile.ErrBusy) {
		t.Fatalf("try-once during the lock-delay: %v, want busy", err)
	}
	described, err := rpc.Describe(ctx, &pb.DescribeRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if left := described.GetDelayRemaining().AsDuration(); left <= 0 || left > delay {
		t.Fatalf("Describe's delay_remaining %v, want within (0, %v]", left, delay)
	}
	next, err := other.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A lower bound, not a speed target: the revoke started the delay after revokedAt (2 ms of rounding).
	if waited := time.Since(revokedAt); waited < delay-2*time.Millisecond {
		t.Fatalf("granted %v after the revoke, before the %v lock-delay had passed", waited, delay)
	}
	_ = next.Release(ctx)
}

// WithLockDelay over 60 s is refused by the coordinator with invalid-argument naming acquire.lock_delay.
func TestWithLockDelayOverTheLimitIsInvalid(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	c := newClient(t, []string{shared.address}, turnstile.Options{})
	_, err := c.Acquire(ctx, lockName(t), new(turnstile.AcquireOptions).WithLockDelay(61*time.Second))
	if !errors.Is(err, turnstile.ErrInvalidArgument) || !strings.Contains(err.Error(), "acquire.lock_delay") {
		t.Fatalf("acquire with a 61 s lock-delay: %v, want invalid-argument naming acquire.lock_delay", err)
	}
}

// A set acquired WithLockDelay sends it for every hold: a revoked hold of the set delays its name (a
// try-once is busy, Describe shows the delay) while a hold of the set that is released hands on at once.
func TestAcquireAllWithLockDelayDelaysARevokedName(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	a, b := lockName(t)+"-a", lockName(t)+"-b"
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	other := newClient(t, []string{shared.address}, turnstile.Options{})
	set, err := holder.AcquireAll(ctx, turnstile.Names(a, b), (&turnstile.AcquireOptions{Owner: "h"}).WithLockDelay(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(shared.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpc := pb.NewLockServiceClient(conn)
	if _, err := rpc.Revoke(ctx, &pb.RevokeRequest{Name: a, SessionId: holder.SessionID(), Owner: "h"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.TryAcquire(ctx, a, nil); !errors.Is(err, turnstile.ErrBusy) {
		t.Fatalf("try-once of the revoked name during the set's lock-delay: %v, want busy", err)
	}
	described, err := rpc.Describe(ctx, &pb.DescribeRequest{Name: a})
	if err != nil {
		t.Fatal(err)
	}
	if left := described.GetDelayRemaining().AsDuration(); left <= 0 || left > 30*time.Second {
		t.Fatalf("Describe's delay_remaining %v, want within (0, 30s]", left)
	}
	if err := set.Lock(b).Release(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := other.TryAcquire(ctx, b, nil)
	if err != nil {
		t.Fatalf("try-once of the released name: %v, want granted at once", err)
	}
	_ = next.Release(ctx)
	// Over 60 s the set is refused, naming its field.
	_, err = other.AcquireAll(ctx, turnstile.Names(lockName(t)+"-c"), new(turnstile.AcquireOptions).WithLockDelay(61*time.Second))
	if !errors.Is(err, turnstile.ErrInvalidArgument) || !strings.Contains(err.Error(), "acquire_all.lock_delay") {
		t.Fatalf("a set with a 61 s lock-delay: %v, want invalid-argument naming acquire_all.lock_delay", err)
	}
}
