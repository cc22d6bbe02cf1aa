package turnstile_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/turnstile-locks/turnstile/clients/go"
)

// openBound is the client's bound on one open attempt (openTimeout) and silentSlack what the tests
// allow on top of a bound: timers and a cancelled stream's goroutines on a shared 2-core machine.
const (
	openBound   = 5 * time.Second
	silentSlack = 1500 * time.Millisecond
)

// silentListener accepts TCP connections on a free loopback port and never writes a byte: a
// coordinator that accepts and never answers. It reads and drops what arrives.
func silentListener(t *testing.T) string {
	t.Helper()
	return silentListenerTelling(t, nil)
}

// silentListenerTelling is silentListener, sending on accepted (when not nil, without blocking)
// each time it accepts a connection.
func silentListenerTelling(t *testing.T, accepted chan<- struct{}) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			if accepted != nil {
				select {
				case accepted <- struct{}{}:
				default:
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().String()
}

// requireEnded fails unless run ended with reason within [min, bound + silentSlack], its message naming address.
func requireEnded(t *testing.T, run *acquireRun, want turnstile.Reason, address string, minimum, bound time.Duration) {
	t.Helper()
	err, took := run.end(t, bound)
	if reason(err) != want || !strings.Contains(err.Error(), address) {
		t.Fatalf("ended with %v, want %s naming %s", err, want, address)
	}
	if took < minimum || took > bound+silentSlack {
		t.Fatalf("ended after %s, want within [%s, %s]", took, minimum, bound+silentSlack)
	}
	t.Logf("ended after %s: %v", took.Round(time.Millisecond), err)
}

// A first acquire (no wait) on a port that accepts and never answers fails with ReasonConnection
// naming the address within the open bound, and one with a wait within the wait + 1 s.
func TestSilentCoordinatorFirstOpen(t *testing.T) {
	address := silentListener(t)
	t.Run("no wait", func(t *testing.T) {
		c := newClient(t, []string{address}, turnstile.Options{})
		run := startAcquire(func() (*turnstile.Lock, error) { return c.Acquire(context.Background(), lockName(t), nil) })
		requireEnded(t, run, turnstile.ReasonConnection, address, openBound-100*time.Millisecond, openBound)
	})
	t.Run("wait 1s", func(t *testing.T) {
		c := newClient(t, []string{address}, turnstile.Options{})
		run := startAcquire(func() (*turnstile.Lock, error) {
			return c.Acquire(context.Background(), lockName(t), &turnstile.AcquireOptions{Wait: time.Second})
		})
		requireEnded(t, run, turnstile.ReasonConnection, address, 2*time.Second-100*time.Millisecond, 2*time.Second)
	})
}

// Against a real coordinator SIGSTOPped: a first open fails with ReasonConnection within the open
// bound; on a session opened before the stop, an acquire with a wait ends by the wait + 1 s with
// the client's own timeout (withdrawn).
func TestSilentCoordinatorStopped(t *testing.T) {
	requireTools(t)
	coord := newCoordinator(t)
	opened := newClient(t, []string{coord.address}, turnstile.Options{})
	if _, err := opened.TryAcquire(testContext(t), lockName(t)+"-open", nil); err != nil {
		t.Fatal(err)
	}
	_ = coord.process.cmd.Process.Signal(syscall.SIGSTOP)
	t.Cleanup(func() { _ = coord.process.cmd.Process.Signal(syscall.SIGCONT) })

	t.Run("first open", func(t *testing.T) {
		c := newClient(t, []string{coord.address}, turnstile.Options{})
		run := startAcquire(func() (*turnstile.Lock, error) { return c.Acquire(context.Background(), lockName(t), nil) })
		requireEnded(t, run, turnstile.ReasonConnection, coord.address, openBound-100*time.Millisecond, openBound)
	})
	t.Run("open session", func(t *testing.T) {
		run := startAcquire(func() (*turnstile.Lock, error) {
			return opened.Acquire(context.Background(), lockName(t), &turnstile.AcquireOptions{Wait: 500 * time.Millisecond})
		})
		err, took := run.end(t, 1500*time.Millisecond)
		requireWithdrawnTimeout(t, err)
		if took > 1500*time.Millisecond+silentSlack {
			t.Fatalf("ended after %s, want within %s", took, 1500*time.Millisecond+silentSlack)
		}
	})
}
