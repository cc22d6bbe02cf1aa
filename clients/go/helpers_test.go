package turnstile_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// eventually bounds every wait of the tests: long enough for 2 loaded cores, never a speed target.
const eventually = 60 * time.Second

// testContext is cancelled when the test ends or after `eventually`.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	t.Cleanup(cancel)
	return ctx
}

// newClient makes a client closed at the end of the test.
func newClient(t *testing.T, addresses []string, opts turnstile.Options) *turnstile.Client {
	t.Helper()
	if opts.ClientName == "" {
		opts.ClientName = t.Name()
	}
	c, err := turnstile.NewClient(addresses, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

// lockName is a lock name of this test alone.
func lockName(t *testing.T) string {
	return "go-test/" + strings.ReplaceAll(t.Name(), "/", "-")
}

// receive waits for a value on ch, failing the test after `eventually`.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(eventually):
		t.Fatalf("no %s within %s", what, eventually)
		panic("unreachable")
	}
}

// closed waits for ch to be closed, failing the test after `eventually`.
func closed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	receive(t, ch, what)
}

// isOpen reports whether ch is still open right now.
func isOpen(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// reason is the Reason of err's *turnstile.Error ("" when it has none).
func reason(err error) turnstile.Reason {
	var e *turnstile.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// queued returns AcquireOptions whose OnQueued signals the returned channel (once).
func queued(opts turnstile.AcquireOptions) (*turnstile.AcquireOptions, <-chan uint32) {
	ch := make(chan uint32, 1)
	opts.OnQueued = func(position uint32) {
		select {
		case ch <- position:
		default:
		}
	}
	return &opts, ch
}

// waitForGoroutines waits until no more than want goroutines run, then reports the stacks of
// the extra ones if they never end. grpc-go's transports end a moment after Close returns, so
// this waits for the count (as goleak does) instead of reading it once.
func waitForGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines still running, %d before the client; stacks:\n%s", runtime.NumGoroutine(), want, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForNoClientGoroutines waits until no goroutine runs code of the client package or grpc-go
// (the harness's own goroutines, which watch child processes, do not count), then reports the
// stacks of those left if they never end.
func waitForNoClientGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := clientGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the client or grpc-go still running after Close:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clientGoroutines are the stacks of goroutines running the client package or grpc-go.
func clientGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "turnstile/clients/go.") || strings.Contains(g, "google.golang.org/grpc") {
			found = append(found, g)
		}
	}
	return found
}
