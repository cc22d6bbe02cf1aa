package turnstile_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// The client's own deadline (docs/protocol.md, "The client's own deadline"): an acquire with a
// finite Wait ends by Wait + 1 s (the answer grace) however dead the link or stalled the store,
// with a timeout, and its unknown outcome is withdrawn, never left held. The watchdog is far above
// that bound (a loaded machine) and far below what a client without its own deadline would take.
const deadlineSlack = 10 * time.Second

// acquireRun is an acquire running in its own goroutine, from when it was started.
type acquireRun struct {
	started time.Time
	ended   chan acquireEnd
}

type acquireEnd struct {
	err error
	at  time.Time
}

// startAcquire runs acquire in a goroutine; a grant counts as an error (the tests want none).
func startAcquire(acquire func() (*turnstile.Lock, error)) *acquireRun {
	r := &acquireRun{started: time.Now(), ended: make(chan acquireEnd, 1)}
	go func() {
		lock, err := acquire()
		if err == nil {
			err = errors.New("granted: " + lock.Name())
		}
		r.ended <- acquireEnd{err, time.Now()}
	}()
	return r
}

// end returns the acquire's error and how long it took, failing the test if it has not ended
// within bound + deadlineSlack of its start.
func (r *acquireRun) end(t *testing.T, bound time.Duration) (error, time.Duration) {
	t.Helper()
	select {
	case e := <-r.ended:
		return e.err, e.at.Sub(r.started)
	case <-time.After(time.Until(r.started.Add(bound + deadlineSlack))):
		t.Fatalf("the acquire had not ended %s after it was sent (bound %s)", bound+deadlineSlack, bound)
		panic("unreachable")
	}
}

// requireWithdrawnTimeout fails the test unless err is the client's own timeout.
func requireWithdrawnTimeout(t *testing.T, err error) {
	t.Helper()
	if reason(err) != turnstile.ReasonTimeout || !strings.Contains(err.Error(), "the acquire was withdrawn") {
		t.Fatalf("acquire ended with %v, want the client's own timeout (withdrawn)", err)
	}
}

// A queued acquire behind a frozen link: the holder lets go, the grant is made and held in the
// proxy. The acquire ends with a timeout by its bound. Once the link thaws, the late grant reaches
// the client, which releases it; once it breaks instead, the session resumes on the next address
// and sends the acquire again as a try-once plus cancel, which finds the grant and releases it.
// Either way another client gets the lock while the first session still lives (a hold kept would
// be renewed by its keepalives for good, and that client would wait until the test's end).
func TestAcquireDeadlineBehindFrozenLink(t *testing.T) {
	requireTools(t)
	t.Run("thawed", func(t *testing.T) {
		acquireBehindFrozenLink(t, func(p *freezingProxy, _ <-chan turnstile.Event) { p.Thaw() })
	})
	t.Run("broken and resumed", func(t *testing.T) {
		acquireBehindFrozenLink(t, func(p *freezingProxy, events <-chan turnstile.Event) {
			p.Close()
			for e := range events {
				if e.Kind == turnstile.EventResumed {
					return
				}
			}
		})
	})
}

func acquireBehindFrozenLink(t *testing.T, restore func(*freezingProxy, <-chan turnstile.Event)) {
	ctx := testContext(t)
	name := lockName(t)
	proxy := newFreezingProxy(t, shared.address)
	events := make(chan turnstile.Event, 16)
	a := newClient(t, []string{proxy.address(), shared.address}, turnstile.Options{OnEvent: func(e turnstile.Event) {
		select {
		case events <- e:
		default:
		}
	}})
	holder := newClient(t, []string{shared.address}, turnstile.Options{})
	other := newClient(t, []string{shared.address}, turnstile.Options{})

	first, err := holder.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	const wait = 2 * time.Second
	opts, position := queued(turnstile.AcquireOptions{Wait: wait})
	run := startAcquire(func() (*turnstile.Lock, error) { return a.Acquire(ctx, name, opts) })
	receive(t, position, "a's acquire queued")
	session := a.SessionID()
	proxy.Freeze()
	if err := first.Release(ctx); err != nil { // the grant to a is made, and held in the proxy
		t.Fatal(err)
	}
	err, took := run.end(t, wait+time.Second)
	requireWithdrawnTimeout(t, err)
	t.Logf("queued acquire (wait %s) ended %s after it was sent", wait, took.Round(time.Millisecond))

	recovered := make(chan struct{})
	go func() {
		defer close(recovered)
		restore(proxy, events)
	}()
	closed(t, recovered, "the link's recovery")
	lock, err := other.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatalf("the lock was left held: %v", err)
	}
	if got := a.SessionID(); got != session {
		t.Fatalf("a's session changed from %q to %q: the hold may have lapsed with it, not been released", session, got)
	}
	if lock.Token() <= first.Token() {
		t.Fatalf("other's token %d is not above the first holder's %d", lock.Token(), first.Token())
	}
	_ = lock.Release(ctx)
}

// A try-once while redis-server is stopped (SIGSTOP): its outcome stays unknown until the store
// answers. It ends with a timeout by 0 + 1 s; once Redis resumes, the coordinator withdraws the
// claim (or the grant is released), and another client gets the lock while a's session lives.
func TestAcquireDeadlineDuringStoreStall(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	dir := t.TempDir()
	redis, url, err := startRedis(dir)
	if err != nil {
		t.Fatal(err)
	}
	stopOnCleanup(t, redis)
	resume := func() { _ = redis.cmd.Process.Signal(syscall.SIGCONT) }
	t.Cleanup(resume) // runs before the kill: a stopped Redis would hold up the coordinator's exit
	coordinator, err := startCoordinatorOn(url)
	if err != nil {
		t.Fatal(err)
	}
	stopOnCleanup(t, coordinator.process)
	a := newClient(t, []string{coordinator.address}, turnstile.Options{})
	b := newClient(t, []string{coordinator.address}, turnstile.Options{})
	warm, err := a.TryAcquire(ctx, name+"/warm-up", nil) // a's session is open before the stall
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Release(ctx); err != nil {
		t.Fatal(err)
	}
	session := a.SessionID()

	if err := redis.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	run := startAcquire(func() (*turnstile.Lock, error) { return a.TryAcquire(ctx, name, nil) })
	err, took := run.end(t, time.Second)
	requireWithdrawnTimeout(t, err)
	t.Logf("try-once ended %s after it was sent into a stalled store", took.Round(time.Millisecond))
	resume()

	lock, err := b.Acquire(ctx, name, nil)
	if err != nil {
		t.Fatalf("the lock was left held: %v", err)
	}
	if got := a.SessionID(); got != session {
		t.Fatalf("a's session changed from %q to %q: the claim may have lapsed with it, not been withdrawn", session, got)
	}
	_ = lock.Release(ctx)
}
