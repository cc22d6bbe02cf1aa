package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	pb "turnstile/examples/go/gen/turnstile/v1"
)

// workerConfig is what one worker does: `rounds` times acquire `lock` (waiting up to `wait`),
// log "enter", hold for `hold`, log "exit", release.
type workerConfig struct {
	name   string
	lock   string
	rounds int
	hold   time.Duration
	wait   time.Duration
	ttl    time.Duration
	log    *sharedLog
}

// runWorker opens its own session and runs the rounds. A retryable `failed` (TIMEOUT, BUSY,
// UNAVAILABLE, EXPIRED) or a lock lost mid-round repeats the round; a session that ended (it
// could not be resumed) is replaced by a new one; anything else ends the worker.
func runWorker(ctx context.Context, coordinators []pb.LockServiceClient, cfg workerConfig) error {
	session, err := Open(ctx, coordinators, cfg.name, cfg.ttl)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.name, err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = session.Close(closeCtx)
	}()
	for round, attempt := 1, 1; round <= cfg.rounds; attempt++ {
		if session.Ended() && ctx.Err() == nil {
			log.Printf("%s: session %s ended; opening a new one", cfg.name, session.ID)
			if session, err = Open(ctx, coordinators, cfg.name, cfg.ttl); err != nil {
				return fmt.Errorf("%s: reopen: %w", cfg.name, err)
			}
		}
		// A fresh owner per acquire: a retry right after a lock judged lost must not re-enter a
		// hold whose release is still on its way.
		owner := fmt.Sprintf("%s/%d", cfg.name, attempt)
		lock, err := session.Acquire(ctx, cfg.lock, owner, cfg.wait)
		var failed *FailedError
		var lost *LostError
		switch {
		case errors.As(err, &failed) && failed.Retryable():
			log.Printf("%s: acquire %s: %v; retrying", cfg.name, cfg.lock, failed)
			continue
		case errors.As(err, &lost):
			log.Printf("%s: %v; retrying", cfg.name, lost)
			continue
		case errors.Is(err, ErrSessionEnded) && ctx.Err() == nil:
			log.Printf("%s: acquire %s: %v; retrying on a new session", cfg.name, cfg.lock, err)
			continue
		case err != nil:
			return fmt.Errorf("%s: acquire %s: %w", cfg.name, cfg.lock, err)
		}
		if err := holdOnce(ctx, cfg, lock); err != nil {
			var lost *LostError
			if !errors.As(err, &lost) {
				return err
			}
			log.Printf("%s: %v; retrying the round", cfg.name, lost)
			continue
		}
		round++
	}
	return nil
}

// holdOnce uses one granted lock: "enter", hold, "exit", release. Each log line is written only
// while the lease is still valid locally; a lock lost meanwhile logs "lost" and is not used again.
func holdOnce(ctx context.Context, cfg workerConfig, lock *Lock) error {
	if !lock.Valid() {
		return &LostError{Name: lock.Name, Token: lock.Token, Reason: lock.LostReason()}
	}
	if err := cfg.log.Append("enter", cfg.name, lock.Token); err != nil {
		return err
	}
	log.Printf("%s: holding %s with fencing token %d", cfg.name, lock.Name, lock.Token)
	timer := time.NewTimer(cfg.hold)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-lock.Lost():
	case <-ctx.Done():
	}
	if !lock.Valid() {
		_ = cfg.log.Append("lost", cfg.name, lock.Token)
		return &LostError{Name: lock.Name, Token: lock.Token, Reason: lock.LostReason()}
	}
	if err := cfg.log.Append("exit", cfg.name, lock.Token); err != nil {
		return err
	}
	releaseCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A session that ended meanwhile lets go of the hold in the store when its lease runs out.
	if err := lock.Release(releaseCtx); err != nil && !errors.Is(err, ErrSessionEnded) {
		return fmt.Errorf("%s: release: %w", cfg.name, err)
	}
	return ctx.Err()
}
