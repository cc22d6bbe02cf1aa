package turnstile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// The acquire steps of the Go conformance driver (conformance_test.go): acquire, acquireAll and
// campaign started in the background, and their answers checked against the step's expectation.

func (r *scenarioRun) start(s *step) error {
	c, err := lookup(r.clients, s.Client, "client")
	if err != nil {
		return err
	}
	opts := &turnstile.AcquireOptions{
		Wait: time.Duration(s.WaitMs) * time.Millisecond, Owner: s.Owner, Priority: s.Priority, AskToYield: s.AskToYield,
	}
	if s.LockDelayMs != nil {
		opts = opts.WithLockDelay(time.Duration(*s.LockDelayMs) * time.Millisecond)
	}
	if s.ValueBytes > 0 {
		opts.Value = make([]byte, s.ValueBytes) // the acquire's value: that many zero bytes
	}
	ctx, cancel := context.WithCancel(r.ctx)
	a := &started{client: s.Client, name: s.Name, cancel: cancel, done: make(chan struct{})}
	var call func() (any, error)
	switch s.op {
	case "acquireAll":
		a.name = s.Names[0]
		claims := turnstile.Names(s.Names...)
		call = func() (any, error) {
			if s.Try {
				return nilIfErr(c.TryAcquireAll(ctx, claims, opts))
			}
			return nilIfErr(c.AcquireAll(ctx, claims, opts))
		}
	case "campaign":
		a.name = s.Election
		var value string
		if err := json.Unmarshal(s.Value, &value); err != nil {
			return err
		}
		call = func() (any, error) { return nilIfErr(c.Election(s.Election).Campaign(ctx, []byte(value), opts)) }
	default:
		call = func() (any, error) { return nilIfErr(acquireOne(ctx, c, s, opts)) }
	}
	r.started[s.id] = a
	go func() {
		defer close(a.done)
		a.held, a.err = call()
	}()
	var e expectation
	if err := parseExpectation(s.Expect, &e); err != nil {
		return err
	}
	if e.Queued > 0 {
		on := e.On
		if on == "" {
			on = a.name
		}
		var waiters int
		return waitUntil(func() (bool, string) {
			if !isOpen(a.done) {
				return false, fmt.Sprintf("%q to queue, but it was answered (held %v, err %v)", s.id, a.held != nil, a.err)
			}
			d, err := r.describeOnce(on)
			if err == nil {
				waiters = len(d.GetWaiters())
			}
			return err == nil && waiters == e.Queued, fmt.Sprintf("%q to queue at position %d on %q (waiters: %d)", s.id, e.Queued, on, waiters)
		})
	}
	if err := r.settle(a, s.id); err != nil {
		return err
	}
	return r.check(s.id, a, s)
}

// nilIfErr turns a typed nil result into an untyped nil, so that "held == nil" means no grant.
func nilIfErr[T any](v *T, err error) (any, error) {
	if err != nil || v == nil {
		return nil, err
	}
	return v, nil
}

func acquireOne(ctx context.Context, c *turnstile.Client, s *step, opts *turnstile.AcquireOptions) (*turnstile.Lock, error) {
	switch s.Kind {
	case "semaphore":
		sem := c.Semaphore(s.Name, s.Limit)
		if s.Try {
			return sem.TryAcquire(ctx, opts)
		}
		return sem.Acquire(ctx, opts)
	case "read":
		if s.Try {
			return c.ReadWriteLock(s.Name).TryRead(ctx, opts)
		}
		return c.ReadWriteLock(s.Name).Read(ctx, opts)
	case "write":
		if s.Try {
			return c.ReadWriteLock(s.Name).TryWrite(ctx, opts)
		}
		return c.ReadWriteLock(s.Name).Write(ctx, opts)
	case "":
		if s.Try {
			return c.TryAcquire(ctx, s.Name, opts)
		}
		return c.Acquire(ctx, s.Name, opts)
	}
	return nil, fmt.Errorf("unknown kind %q", s.Kind)
}

func (r *scenarioRun) settle(a *started, id string) error {
	select {
	case <-a.done:
		return nil
	case <-time.After(stepBound):
		return fmt.Errorf("%q was not answered within %s", id, stepBound)
	}
}

// check compares the answer of a settled acquire with the step's expectation.
func (r *scenarioRun) check(id string, a *started, s *step) error {
	var e expectation
	if err := parseExpectation(s.Expect, &e); err != nil {
		return err
	}
	if e.granted {
		if a.err != nil {
			return fmt.Errorf("%q was not granted: %v", id, a.err)
		}
		r.held[id] = a
		if s.TokenAbove != "" || s.TokenEquals != "" {
			ref := s.TokenAbove + s.TokenEquals
			theirs, err := r.lockIn(ref, "")
			if err != nil {
				return err
			}
			mine := lockOn(a.held, theirs.Name()).Token()
			if s.TokenAbove != "" && mine <= theirs.Token() {
				return fmt.Errorf("%q token %d is not above %q token %d", id, mine, ref, theirs.Token())
			}
			if s.TokenEquals != "" && mine != theirs.Token() {
				return fmt.Errorf("%q token %d is not %q token %d", id, mine, ref, theirs.Token())
			}
		}
		if s.HoldCount != nil {
			if got := a.held.(*turnstile.Lock).HoldCount(); got != *s.HoldCount {
				return fmt.Errorf("%q hold count %d, want %d", id, got, *s.HoldCount)
			}
		}
		if s.Locks != nil {
			if got := len(a.held.(*turnstile.LockSet).Locks); got != *s.Locks {
				return fmt.Errorf("%q has %d locks, want %d", id, got, *s.Locks)
			}
		}
		return nil
	}
	if e.Error == "" {
		return fmt.Errorf("%q: a queued expectation is checked when the acquire starts", id)
	}
	if a.err == nil {
		return fmt.Errorf("%q was granted; expected %s", id, e.Error)
	}
	var terr *turnstile.Error
	if !errors.As(a.err, &terr) {
		return fmt.Errorf("%q failed with %v, which is no *turnstile.Error", id, a.err)
	}
	if string(terr.Reason) != e.Error {
		return fmt.Errorf("%q failed %s (%v), expected %s", id, terr.Reason, terr, e.Error)
	}
	if e.MessageIncludes != "" && !strings.Contains(terr.Error(), e.MessageIncludes) {
		return fmt.Errorf("%q message %q does not include %q", id, terr.Error(), e.MessageIncludes)
	}
	if e.BlockedBy != nil {
		var got, want []string
		for _, b := range terr.BlockedBy {
			got = append(got, fmt.Sprintf("%s %s %d %s", b.ClientName, b.Name, b.FencingToken, b.Owner))
		}
		for _, b := range e.BlockedBy {
			key := b.Client + " " + b.Name
			if b.Lock != "" {
				lock, err := r.lockIn(b.Lock, b.Name)
				if err != nil {
					return err
				}
				key += fmt.Sprintf(" %d %s", lock.Token(), lock.Owner())
			}
			want = append(want, key)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%q blocked by %q, want %q", id, got, want)
		}
	}
	if e.Cycle != nil {
		var got []string
		for _, step := range terr.DeadlockCycle {
			got = append(got, step.ClientName)
		}
		if !reflect.DeepEqual(got, e.Cycle) {
			return fmt.Errorf("%q deadlock cycle %q, want %q", id, got, e.Cycle)
		}
	}
	return nil
}

// lockOn is the lock of held on name (a set's lock of that name; a lock or leadership itself).
func lockOn(held any, name string) *turnstile.Lock {
	switch h := held.(type) {
	case *turnstile.LockSet:
		return h.Lock(name)
	case *turnstile.Leadership:
		return h.Lock
	}
	return held.(*turnstile.Lock)
}

// lockIn is the lock held as id (for a set: its lock of name, or its first).
func (r *scenarioRun) lockIn(id, name string) (*turnstile.Lock, error) {
	a, err := lookup(r.held, id, "hold")
	if err != nil {
		return nil, err
	}
	if set, ok := a.held.(*turnstile.LockSet); ok && name == "" {
		return set.Locks[0], nil
	}
	return lockOn(a.held, name), nil
}

func (r *scenarioRun) lock(id string) (*turnstile.Lock, error) {
	a, err := lookup(r.held, id, "hold")
	if err != nil {
		return nil, err
	}
	if _, ok := a.held.(*turnstile.LockSet); ok {
		return nil, fmt.Errorf("%q is a set", id)
	}
	return lockOn(a.held, ""), nil
}
