package turnstile_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// holdLog is the in-process record of every use of the lock, in the order the uses happened
// (appended under one mutex): what the checker reads.
type holdLog struct {
	mu     sync.Mutex
	events []holdEvent
	enters int
	// reached is closed when mark enters have been logged.
	mark    int
	reached chan struct{}
}

func newHoldLog(mark int) *holdLog {
	return &holdLog{mark: mark, reached: make(chan struct{})}
}

type holdEvent struct {
	kind   string // "enter", "exit", or "lost" (told first, the holder stopped using it)
	worker int
	token  uint64
}

func (l *holdLog) add(kind string, worker int, token uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, holdEvent{kind, worker, token})
	if kind == "enter" {
		l.enters++
		if l.enters == l.mark {
			close(l.reached)
		}
	}
}

// check returns the problems found: two holders at once, a token not above the previous one, an
// exit by someone else than the holder, a hold that never ended.
func (l *holdLog) check() (holds int, problems []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	holder, last := -1, uint64(0)
	for i, e := range l.events {
		switch e.kind {
		case "enter":
			holds++
			if holder != -1 {
				problems = append(problems, fmt.Sprintf("event %d: worker %d entered while worker %d held the lock", i, e.worker, holder))
			}
			if e.token <= last {
				problems = append(problems, fmt.Sprintf("event %d: token %d after %d", i, e.token, last))
			}
			holder, last = e.worker, e.token
		default:
			if holder != e.worker {
				problems = append(problems, fmt.Sprintf("event %d: worker %d %s while worker %d held the lock", i, e.worker, e.kind, holder))
			}
			holder = -1
		}
	}
	if holder != -1 {
		problems = append(problems, fmt.Sprintf("worker %d never left its last hold", holder))
	}
	return holds, problems
}

// Workers on two coordinators contend for one lock while the coordinator every session is on is
// SIGKILLed a third of the way in: every session resumes on the other, and the checker finds no
// two holders at once and strictly increasing tokens.
func TestContentionAcrossACrashKeepsHoldsApart(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	name := lockName(t)
	const workers, rounds = 4, 15
	crashed := newCoordinator(t)
	survivor := newCoordinator(t)
	var resumes atomic.Int32
	log := newHoldLog(workers * rounds / 3)

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		client := newClient(t, []string{crashed.address, survivor.address}, turnstile.Options{
			OnEvent: func(e turnstile.Event) {
				if e.Kind == turnstile.EventResumed {
					resumes.Add(1)
				}
			},
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < rounds; {
				err := client.WithLock(ctx, name, func(ctx context.Context, lock *turnstile.Lock) error {
					if !lock.Valid() {
						return lock.Err()
					}
					log.add("enter", w, lock.Token())
					timer := time.NewTimer(2 * time.Millisecond) // the work done under the lock
					defer timer.Stop()
					select {
					case <-timer.C:
					case <-ctx.Done():
					}
					if !lock.Valid() {
						log.add("lost", w, lock.Token())
						return lock.Err()
					}
					log.add("exit", w, lock.Token())
					return nil
				}, nil)
				var e *turnstile.Error
				switch {
				case err == nil:
					done++
				case errors.As(err, &e) && e.Retryable():
				default:
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
			}
		}()
	}
	closed(t, log.reached, "a third of the holds before the fault")
	crashed.kill()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	holds, problems := log.check()
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("checked %d holds of %d workers: %d problems (overlaps, tokens not increasing, holds never left); 1 fault (SIGKILL of the coordinator every session was on); %d sessions resumed",
		holds, workers, len(problems), resumes.Load())
	if holds < workers*rounds {
		t.Fatalf("%d holds, want at least %d", holds, workers*rounds)
	}
	if got := resumes.Load(); got != workers {
		t.Fatalf("%d sessions resumed, want %d", got, workers)
	}
}

// The checker above can fail: fed an overlap, a repeated token, a foreign exit and an unfinished
// hold, it reports each.
func TestHoldLogCheckerFindsEachViolation(t *testing.T) {
	log := newHoldLog(0)
	for _, e := range []holdEvent{
		{"enter", 1, 5}, {"enter", 2, 6}, // overlap
		{"exit", 2, 6},
		{"enter", 3, 6}, // token not above the last
		{"exit", 1, 6},  // someone else's exit
		{"enter", 4, 7}, // never left
	} {
		log.add(e.kind, e.worker, e.token)
	}
	holds, problems := log.check()
	if holds != 4 || len(problems) != 4 {
		t.Fatalf("checked %d holds, found %d problems, want 4 and 4: %q", holds, len(problems), problems)
	}
}
