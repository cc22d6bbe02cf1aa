package turnstile_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// A request the coordinator cannot take — over its --max-message-bytes, or not encodable (a string
// that is not UTF-8) — would end the whole session (and lose its locks); the client refuses it
// instead: that call alone fails invalid-argument, nothing is sent, the session goes on.

var (
	oversizedMessage   = regexp.MustCompile(`^[a-z_]+ request: \d+ bytes, over the 65536-byte maximum a coordinator reads \(serve --max-message-bytes; client option MaxRequestBytes\); nothing was sent$`)
	unencodableMessage = regexp.MustCompile(`^[a-z_]+ request: cannot be encoded \(.+\); nothing was sent$`)
)

// badCallBound bounds a refused call: it returns at once; before the fix it asked again on new
// sessions until its ctx ended.
const badCallBound = 20 * time.Second

func TestUnsendableRequestFailsAloneOnTheSameSession(t *testing.T) {
	requireTools(t)
	cases := []struct {
		name, kind string
		message    *regexp.Regexp
		call       func(ctx context.Context, c *turnstile.Client, held *turnstile.Lock, leader *turnstile.Leadership) error
	}{
		{"acquire with an oversized value", "acquire", oversizedMessage, func(ctx context.Context, c *turnstile.Client, _ *turnstile.Lock, _ *turnstile.Leadership) error {
			_, err := c.Acquire(ctx, lockName(t)+"-big", &turnstile.AcquireOptions{Value: make([]byte, 100_000)})
			return err
		}},
		{"acquire of a non-UTF-8 name", "acquire", unencodableMessage, func(ctx context.Context, c *turnstile.Client, _ *turnstile.Lock, _ *turnstile.Leadership) error {
			_, err := c.Acquire(ctx, "bad\xff", nil)
			return err
		}},
		{"acquire_all of a non-UTF-8 name", "acquire_all", unencodableMessage, func(ctx context.Context, c *turnstile.Client, _ *turnstile.Lock, _ *turnstile.Leadership) error {
			_, err := c.AcquireAll(ctx, turnstile.Names(lockName(t)+"-a", "bad\xfe"), nil)
			return err
		}},
		{"proclaim of an oversized value", "proclaim", oversizedMessage, func(ctx context.Context, _ *turnstile.Client, _ *turnstile.Lock, leader *turnstile.Leadership) error {
			return leader.Proclaim(ctx, make([]byte, 70_000))
		}},
		{"transfer to a non-UTF-8 owner", "transfer", unencodableMessage, func(ctx context.Context, _ *turnstile.Client, held *turnstile.Lock, _ *turnstile.Leadership) error {
			_, err := held.Transfer(ctx, "", "bad\xff")
			return err
		}},
		{"request_release with a non-UTF-8 reason", "request_release", unencodableMessage, func(ctx context.Context, c *turnstile.Client, held *turnstile.Lock, _ *turnstile.Leadership) error {
			_, err := c.RequestRelease(ctx, held.Name(), "bad\xff")
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			events := make(chan turnstile.Event, 64)
			c := newClient(t, []string{shared.address}, turnstile.Options{OnEvent: func(e turnstile.Event) {
				select {
				case events <- e:
				default:
				}
			}})
			held, err := c.Acquire(ctx, lockName(t)+"-held", nil)
			if err != nil {
				t.Fatal(err)
			}
			leader, err := c.Election(lockName(t)+"-election").Campaign(ctx, []byte("v1"), nil)
			if err != nil {
				t.Fatal(err)
			}
			sessionID := c.SessionID()

			callCtx, cancel := context.WithTimeout(ctx, badCallBound)
			defer cancel()
			err = tc.call(callCtx, c, held, leader)
			var e *turnstile.Error
			if !errors.As(err, &e) || e.Reason != turnstile.ReasonInvalidArgument {
				t.Fatalf("the bad %s: %v, want invalid-argument", tc.kind, err)
			}
			if !strings.HasPrefix(e.Message, tc.kind+" request: ") || !tc.message.MatchString(e.Message) {
				t.Fatalf("the bad %s's message %q, want it to match %s", tc.kind, e.Message, tc.message)
			}

			for what, lock := range map[string]*turnstile.Lock{"the lock held before": held, "the leadership held before": leader.Lock} {
				if !isOpen(lock.Done()) || !lock.Valid() || lock.Err() != nil {
					t.Fatalf("%s was lost to the bad %s: %v", what, tc.kind, lock.Err())
				}
			}
			next, err := c.Acquire(ctx, lockName(t)+"-next", nil)
			if err != nil {
				t.Fatalf("the acquire after the bad %s: %v", tc.kind, err)
			}
			if got := c.SessionID(); got != sessionID {
				t.Fatalf("the acquire after the bad %s was granted on session %q, want the same session %q", tc.kind, got, sessionID)
			}
			if err := next.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if err := held.Release(ctx); err != nil {
				t.Fatalf("releasing the lock held before the bad %s: %v", tc.kind, err)
			}
			for len(events) > 0 {
				if e := <-events; e.Kind != turnstile.EventConnected || e.SessionID != sessionID {
					t.Errorf("session event %s %s (%v): the session churned; want one connected event", e.Kind, e.SessionID, e.Err)
				}
			}
		})
	}
}

// A coordinator reads a message up to the largest open its limits allow (--max-locks-per-session
// holds at the longest name and owner) and answers any other message past its --max-message-bytes
// alone. Past what it reads at all, it ends the stream RESOURCE_EXHAUSTED: the session is gone, but
// the acquire fails with that end once; it does not open session after session to ask again (each
// ended the same way). With MaxRequestBytes set to the coordinator's limit, the client refuses the
// request itself.
func TestRequestOverTheCoordinatorsLimitFailsInsteadOfAskingAgain(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	// One lock per session: its largest open (about 900 bytes) is below 2048, so it reads 2048 at most.
	coord := newCoordinator(t, "--max-message-bytes", "2048", "--max-locks-per-session", "1")
	value := make([]byte, 3000) // under the coordinator's max-value-bytes (4096), over its message limit

	t.Run("room for an open: refused alone", func(t *testing.T) {
		roomy := newCoordinator(t, "--max-message-bytes", "2048")
		c := newClient(t, []string{roomy.address}, turnstile.Options{})
		held, err := c.Acquire(ctx, lockName(t)+"-held", nil)
		if err != nil {
			t.Fatal(err)
		}
		sessionID := c.SessionID()
		_, err = c.Acquire(ctx, lockName(t), &turnstile.AcquireOptions{Value: value})
		if reason(err) != turnstile.ReasonInvalidArgument || !strings.Contains(err.Error(), "exceeds the maximum of 2048 bytes (--max-message-bytes)") {
			t.Fatalf("the acquire over the coordinator's limit: %v, want the coordinator's invalid-argument naming its 2048 bytes", err)
		}
		if !held.Valid() || c.SessionID() != sessionID {
			t.Fatalf("the session or its lock was lost to the refused acquire: %v", held.Err())
		}
	})
	t.Run("client limit above the coordinator's", func(t *testing.T) {
		connected := make(chan turnstile.Event, 1024)
		c := newClient(t, []string{coord.address}, turnstile.Options{OnEvent: func(e turnstile.Event) {
			if e.Kind == turnstile.EventConnected {
				select {
				case connected <- e:
				default:
				}
			}
		}})
		callCtx, cancel := context.WithTimeout(ctx, badCallBound)
		defer cancel()
		_, err := c.Acquire(callCtx, lockName(t), &turnstile.AcquireOptions{Value: value})
		if reason(err) != turnstile.ReasonSessionEnded || callCtx.Err() != nil || !strings.Contains(err.Error(), "MaxRequestBytes") {
			t.Fatalf("the acquire over the coordinator's limit: %v, want the session's end naming MaxRequestBytes before its ctx ended", err)
		}
		if n := len(connected); n != 1 {
			t.Fatalf("%d sessions opened for one acquire, want 1", n)
		}
		t.Logf("the acquire: %v", err)
	})
	t.Run("client limit at the coordinator's", func(t *testing.T) {
		c := newClient(t, []string{coord.address}, turnstile.Options{MaxRequestBytes: 2048})
		held, err := c.Acquire(ctx, lockName(t)+"-held", nil)
		if err != nil {
			t.Fatal(err)
		}
		sessionID := c.SessionID()
		_, err = c.Acquire(ctx, lockName(t), &turnstile.AcquireOptions{Value: value})
		if reason(err) != turnstile.ReasonInvalidArgument || !strings.Contains(err.Error(), "over the 2048-byte maximum") {
			t.Fatalf("the acquire over MaxRequestBytes: %v, want invalid-argument naming the 2048-byte maximum", err)
		}
		if !held.Valid() || c.SessionID() != sessionID {
			t.Fatalf("the session or its lock was lost to the refused acquire: %v", held.Err())
		}
	})
}
