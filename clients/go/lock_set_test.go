package turnstile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// describe asks the shared coordinator for name's holders and waiters.
func describe(t *testing.T, ctx context.Context, name string) *pb.DescribeResponse {
	t.Helper()
	conn, err := grpc.NewClient(shared.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	d, err := pb.NewLockServiceClient(conn).Describe(ctx, &pb.DescribeRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type setResult struct {
	set *turnstile.LockSet
	err error
}

// acquireAllQueued starts AcquireAll in the background and waits until the set is queued.
func acquireAllQueued(t *testing.T, ctx context.Context, c *turnstile.Client, claims []turnstile.Claim, opts turnstile.AcquireOptions) <-chan setResult {
	t.Helper()
	withQueued, position := queued(opts)
	done := make(chan setResult, 1)
	go func() {
		set, err := c.AcquireAll(ctx, claims, withQueued)
		done <- setResult{set, err}
	}()
	receive(t, position, "the set queued")
	return done
}

func TestASetIsGrantedTogetherWithOneTokenPerName(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	a, b, c := lockName(t)+"/a", lockName(t)+"/b", lockName(t)+"/c"
	client := newClient(t, []string{shared.address}, turnstile.Options{})
	other := newClient(t, []string{shared.address}, turnstile.Options{})

	set, err := client.AcquireAll(ctx, turnstile.Names(a, b, c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Locks) != 3 || len(set.Tokens) != 3 {
		t.Fatalf("%d locks, %d tokens, want 3 of each", len(set.Locks), len(set.Tokens))
	}
	for i, name := range []string{a, b, c} {
		lock := set.Lock(name)
		if set.Locks[i] != lock || lock.Name() != name || set.Tokens[name] != lock.Token() || lock.Token() == 0 || !lock.Valid() {
			t.Fatalf("lock %d of the set: %+v, token %d, want %q held with its token", i, lock, set.Tokens[name], name)
		}
		if _, err := other.TryAcquire(ctx, name, nil); !errors.Is(err, turnstile.ErrBusy) {
			t.Fatalf("another client's TryAcquire of %q in the set: %v, want busy", name, err)
		}
	}
	if set.Lock("not-in-the-set") != nil {
		t.Fatal("Lock of a name outside the set is not nil")
	}
	// One lock of the set released alone: the set's Done closes, the other locks stay held.
	if err := set.Lock(a).Release(ctx); err != nil {
		t.Fatal(err)
	}
	closed(t, set.Done(), "the set's Done after one of its locks was released")
	if !set.Lock(b).Valid() || set.Err() != nil {
		t.Fatalf("b after a was released alone: valid=%v, set err %v", set.Lock(b).Valid(), set.Err())
	}
	if err := set.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{a, b, c} {
		lock, err := other.TryAcquire(ctx, name, nil)
		if err != nil {
			t.Fatalf("%q after the set was released: %v", name, err)
		}
		if lock.Token() <= set.Tokens[name] {
			t.Fatalf("%q: token %d after the set's %d", name, lock.Token(), set.Tokens[name])
		}
	}
}

func TestBadSetsAreRefusedNamingTheField(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	client := newClient(t, []string{shared.address}, turnstile.Options{})
	name := lockName(t)
	seventeen := make([]string, 17)
	for i := range seventeen {
		seventeen[i] = fmt.Sprintf("%s/%d", name, i)
	}
	for _, tc := range []struct {
		what   string
		claims []turnstile.Claim
		field  string
	}{
		{"no names", nil, "acquire_all.locks: must not be empty"},
		{"a name twice", turnstile.Names(name+"/a", name+"/b", name+"/a"), "acquire_all.locks[2].name"},
		{"17 names", turnstile.Names(seventeen...), "acquire_all.locks: 17 locks exceeds the maximum of 16"},
		{"an unknown mode", []turnstile.Claim{{Name: name, Mode: "upgradable"}}, "acquire_all.locks[0].mode"},
	} {
		_, err := client.AcquireAll(ctx, tc.claims, nil)
		if !errors.Is(err, turnstile.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.field) {
			t.Fatalf("%s: %v, want invalid-argument naming %s", tc.what, err, tc.field)
		}
	}
	// The session is untouched: a good set is granted on it.
	set, err := client.AcquireAll(ctx, turnstile.Names(name+"/a", name+"/b"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestTwoClientsTakingTheSameSetInOppositeOrdersBothComplete(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	x, y := lockName(t)+"/x", lockName(t)+"/y"
	const rounds = 20
	errs := make(chan error, 2)
	run := func(c *turnstile.Client, names ...string) {
		for range rounds {
			err := c.WithLocks(ctx, turnstile.Names(names...), func(ctx context.Context, set *turnstile.LockSet) error {
				if len(set.Tokens) != 2 {
					return fmt.Errorf("%d tokens, want 2", len(set.Tokens))
				}
				return nil
			}, &turnstile.AcquireOptions{Wait: eventually / 2})
			if err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}
	go run(newClient(t, []string{shared.address}, turnstile.Options{}), x, y)
	go run(newClient(t, []string{shared.address}, turnstile.Options{}), y, x)
	for range 2 {
		if err := receive(t, errs, "a client's rounds"); err != nil {
			t.Fatal(err)
		}
	}
}
