package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// worker does `rounds` times: acquire `lock` (waiting up to `wait`), log "enter", hold for
// `hold`, log "exit", release — on a session (a turnstile.Client) of its own.
type worker struct {
	name       string
	lock       string
	rounds     int
	hold, wait time.Duration
	log        *sharedLog
}

// run retries a round after a retryable failure (timeout, busy, unavailable, expired) or a lock
// lost mid-round; anything else ends the worker. The client resumes the session on the next
// address when a coordinator drains, and opens a new one if it cannot.
func (w worker) run(ctx context.Context, addresses []string, opts turnstile.Options) error {
	opts.ClientName = w.name
	opts.OnEvent = func(e turnstile.Event) {
		switch e.Kind {
		case turnstile.EventReconnecting:
			log.Printf("session %s: stream ended (%v); resuming", e.SessionID, e.Err)
		case turnstile.EventResumed: // the interop test counts these lines
			log.Printf("session %s: resumed with %d lock(s)", e.SessionID, e.Held)
		case turnstile.EventExpired:
			log.Printf("session %s: ended (%v); the next acquire opens a new one", e.SessionID, e.Err)
		}
	}
	client, err := turnstile.NewClient(addresses, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = client.Close(closeCtx)
	}()
	for round := 1; round <= w.rounds; {
		lock, err := client.Acquire(ctx, w.lock, &turnstile.AcquireOptions{Wait: w.wait})
		var failed *turnstile.Error
		if errors.As(err, &failed) && failed.Retryable() && ctx.Err() == nil {
			log.Printf("%s: acquire %s: %v; retrying", w.name, w.lock, err)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: acquire %s: %w", w.name, w.lock, err)
		}
		if err := w.holdOnce(ctx, lock); err != nil {
			if !errors.Is(err, turnstile.ErrLost) {
				return err
			}
			log.Printf("%s: %v; retrying the round", w.name, err)
			continue
		}
		round++
	}
	return nil
}

// holdOnce uses one granted lock: "enter", hold, "exit", release. Each log line is written only
// while the lease is still valid locally; a lock lost meanwhile logs "lost" and is not used again.
func (w worker) holdOnce(ctx context.Context, lock *turnstile.Lock) error {
	if !lock.Valid() {
		return lock.Err() // the loss
	}
	if err := w.log.Append("enter", w.name, lock.Token()); err != nil {
		return err
	}
	log.Printf("%s: holding %s with fencing token %d", w.name, lock.Name(), lock.Token())
	timer := time.NewTimer(w.hold)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-lock.Done(): // told first: the lock may be lost
	case <-ctx.Done():
	}
	if !lock.Valid() {
		_ = w.log.Append("lost", w.name, lock.Token())
		return lock.Err()
	}
	if err := w.log.Append("exit", w.name, lock.Token()); err != nil {
		return err
	}
	releaseCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := lock.Release(releaseCtx); err != nil {
		return fmt.Errorf("%s: release: %w", w.name, err)
	}
	return ctx.Err()
}
