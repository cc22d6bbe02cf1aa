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
