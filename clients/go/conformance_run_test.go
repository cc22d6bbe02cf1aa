package turnstile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// A scenario run of the Go conformance driver (conformance_test.go): the clients, proxies,
// coordinators and answers of one scenario file, and every step but the acquires.

// started is an acquire, acquireAll or campaign the scenario began; done closes when it is answered.
type started struct {
	client, name string
	cancel       context.CancelFunc
	done         chan struct{}
	held         any // *turnstile.Lock, *turnstile.LockSet or *turnstile.Leadership
	err          error
}

type observer struct {
	mu     sync.Mutex
	seen   bool
	leader *string
}

type scenarioRun struct {
	t         *testing.T
	ctx       context.Context
	admin     pb.LockServiceClient
	addresses map[string]string
	procs     map[string]*coordinator
	proxies   map[string]*freezingProxy
	clients   map[string]*turnstile.Client
	resumed   map[string]chan struct{}
	started   map[string]*started
	held      map[string]*started
	observers map[string]*observer
}

func runScenario(t *testing.T, file string) {
	var scenario scenarioFile
	readJSON(t, file, &scenario)
	t.Log(scenario.Title)
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := grpc.NewClient(shared.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	r := &scenarioRun{
		t: t, ctx: ctx, admin: pb.NewLockServiceClient(conn),
		addresses: map[string]string{"main": shared.address}, procs: map[string]*coordinator{},
		proxies: map[string]*freezingProxy{}, clients: map[string]*turnstile.Client{},
		resumed: map[string]chan struct{}{}, started: map[string]*started{}, held: map[string]*started{},
		observers: map[string]*observer{},
	}
	defer func() {
		cancel()
		r.cleanUp()
		_ = conn.Close()
	}()
	for _, id := range scenario.Coordinators {
		c := newCoordinator(t)
		r.procs[id], r.addresses[id] = c, c.address
	}
	for i, raw := range scenario.Steps {
		s, err := parseStep(raw)
		if err == nil {
			err = r.run(s)
		}
		if err != nil {
			t.Fatalf("step %d %s: %v", i+1, compact(raw), err)
		}
	}
}

// cleanUp closes proxies first (no Close waits on a frozen link), then the clients; the
// scenario's coordinators are killed by newCoordinator's cleanup.
func (r *scenarioRun) cleanUp() {
	for _, p := range r.proxies {
		p.Close()
	}
	var wg sync.WaitGroup
	for _, c := range r.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = c.Close(ctx)
		}()
	}
	wg.Wait()
	for _, s := range r.started {
		<-s.done
	}
}

func (r *scenarioRun) run(s *step) error {
	switch s.op {
	case "open":
		return r.open(s)
	case "proxy":
		target, err := lookup(r.addresses, s.To, "coordinator")
		if err != nil {
			return err
		}
		p := newFreezingProxy(r.t, target)
		r.proxies[s.id], r.addresses[s.id] = p, p.address()
		return nil
	case "freeze":
		p, err := lookup(r.proxies, s.id, "proxy")
		if err == nil {
			p.Freeze()
		}
		return err
	case "cut":
		p, err := lookup(r.proxies, s.id, "proxy")
		if err == nil {
			p.Close()
		}
		return err
	case "acquire", "acquireAll", "campaign":
		return r.start(s)
	case "await":
		a, err := lookup(r.started, s.id, "acquire")
		if err != nil {
			return err
		}
		if err := r.settle(a, s.id); err != nil {
			return err
		}
		return r.check(s.id, a, s)
	case "pending":
		a, err := lookup(r.started, s.id, "acquire")
		if err == nil && !isOpen(a.done) {
			return fmt.Errorf("%q was answered (held %v, err %v); expected it still waiting", s.id, a.held != nil, a.err)
		}
		return err
	case "cancel":
		a, err := lookup(r.started, s.id, "acquire")
		if err == nil {
			a.cancel()
		}
		return err
	case "release":
		return r.release(s.id)
	case "lost":
		return r.lost(s)
	case "valid":
		lock, err := r.lock(s.id)
		if err != nil {
			return err
		}
		if !isOpen(lock.Done()) || !lock.Valid() {
			return fmt.Errorf("%q is no longer valid: %v", s.id, lock.Err())
		}
		return nil
	case "revoke":
		lock, err := r.lock(s.id)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(r.ctx, stepBound)
		defer cancel()
		_, err = r.admin.Revoke(ctx, &pb.RevokeRequest{Name: lock.Name(), SessionId: r.clients[r.held[s.id].client].SessionID(), Owner: lock.Owner()})
		return err
	case "describe":
		return r.describe(s)
	case "transfer":
		return r.transfer(s)
	case "askRelease":
		return r.askRelease(s)
	case "releaseRequested":
		return r.releaseRequested(s)
	case "proclaim", "resign":
		a, err := lookup(r.held, s.id, "hold")
		if err != nil {
			return err
		}
		l, ok := a.held.(*turnstile.Leadership)
		if !ok {
			return fmt.Errorf("%q is no leadership", s.id)
		}
		ctx, cancel := context.WithTimeout(r.ctx, stepBound)
		defer cancel()
		if s.op == "resign" {
			return l.Resign(ctx)
		}
		var value string
		if err := json.Unmarshal(s.Value, &value); err != nil {
			return err
		}
		return l.Proclaim(ctx, []byte(value))
	case "observe":
		return r.observe(s)
	case "leader":
		o, err := lookup(r.observers, s.id, "observer")
		if err != nil {
			return err
		}
		var want *string
		if err := json.Unmarshal(s.Value, &want); err != nil {
			return err
		}
		return waitUntil(func() (bool, string) {
			o.mu.Lock()
			defer o.mu.Unlock()
			return o.seen && equalLeader(o.leader, want), fmt.Sprintf("observer %q to see leader %s (sees %s)", s.id, show(want), show(o.leader))
		})
	case "drain":
		c, err := lookup(r.procs, s.id, "coordinator")
		if err != nil {
			return err
		}
		if !c.signal(syscall.SIGTERM, stepBound) {
			return fmt.Errorf("coordinator %q did not exit after SIGTERM", s.id)
		}
		if c.exitCode() != 0 {
			return fmt.Errorf("drained coordinator %q exit code %d", s.id, c.exitCode())
		}
		return nil
	case "kill":
		c, err := lookup(r.procs, s.id, "coordinator")
		if err == nil {
			c.kill()
		}
		return err
	case "resumed":
		ch, err := lookup(r.resumed, s.id, "client")
		if err != nil {
			return err
		}
		select {
		case <-ch:
			return nil
		case <-time.After(stepBound):
			return fmt.Errorf("client %q did not resume within %s", s.id, stepBound)
		}
	}
	return fmt.Errorf("unknown operation %q", s.op)
}

func (r *scenarioRun) open(s *step) error {
	via := s.Via
	if len(via) == 0 {
		via = []string{"main"}
	}
	addresses := make([]string, len(via))
	for i, name := range via {
		address, err := lookup(r.addresses, name, "coordinator or proxy")
		if err != nil {
			return err
		}
		addresses[i] = address
	}
	resumed := make(chan struct{})
	var once sync.Once
	opts := turnstile.Options{ClientName: s.id, TTL: time.Duration(s.TTLMs) * time.Millisecond,
		OnEvent: func(e turnstile.Event) {
			if e.Kind == turnstile.EventResumed {
				once.Do(func() { close(resumed) })
			}
		}}
	c, err := turnstile.NewClient(addresses, opts)
	if err != nil {
		return err
	}
	// The client opens its session lazily, with its first request.
	r.clients[s.id], r.resumed[s.id] = c, resumed
	return nil
}

func (r *scenarioRun) release(id string) error {
	a, err := lookup(r.held, id, "hold")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.ctx, stepBound)
	defer cancel()
	switch h := a.held.(type) {
	case *turnstile.LockSet:
		return h.Release(ctx)
	case *turnstile.Leadership:
		return h.Resign(ctx)
	}
	return a.held.(*turnstile.Lock).Release(ctx)
}

func (r *scenarioRun) lost(s *step) error {
	lock, err := r.lock(s.id)
	if err != nil {
		return err
	}
	select {
	case <-lock.Done():
	case <-time.After(stepBound):
		return fmt.Errorf("%q was not lost within %s", s.id, stepBound)
	}
	answeredFirst := false
	if s.Before != "" {
		before, err := lookup(r.started, s.Before, "acquire")
		if err != nil {
			return err
		}
		answeredFirst = !isOpen(before.done)
	}
	var terr *turnstile.Error
	if !errors.As(lock.Err(), &terr) || terr.Reason != turnstile.ReasonLost {
		return fmt.Errorf("%q ended with %v, not a loss", s.id, lock.Err())
	}
	if string(terr.LostReason) != s.Reason {
		return fmt.Errorf("%q lost (%s), expected %s", s.id, terr.LostReason, s.Reason)
	}
	if answeredFirst {
		return fmt.Errorf("%q was answered before %q was told it is lost", s.Before, s.id)
	}
	return nil
}

func (r *scenarioRun) describeOnce(name string) (*pb.DescribeResponse, error) {
	ctx, cancel := context.WithTimeout(r.ctx, stepBound)
	defer cancel()
	return r.admin.Describe(ctx, &pb.DescribeRequest{Name: name})
}

func (r *scenarioRun) describe(s *step) error {
	var d *pb.DescribeResponse
	var err error
	return waitUntil(func() (bool, string) {
		d, err = r.describeOnce(s.id)
		what := fmt.Sprintf("%q to show %s (now %v, err %v)", s.id, compact(s.raw), shortDescribe(d), err)
		if err != nil {
			return false, what
		}
		ok := (s.Holders == nil || len(d.GetHolders()) == *s.Holders) &&
			(s.Waiters == nil || len(d.GetWaiters()) == *s.Waiters) &&
			(s.Delay == nil || (d.GetDelayRemaining() != nil) == *s.Delay) &&
			(s.Priorities == nil || slices.Equal(waiterPriorities(d), s.Priorities))
		return ok, what
	})
}

func shortDescribe(d *pb.DescribeResponse) string {
	if d == nil {
		return "nothing"
	}
	return fmt.Sprintf("holders %d, waiters %d, delay %v", len(d.GetHolders()), len(d.GetWaiters()), d.GetDelayRemaining() != nil)
}

func (r *scenarioRun) observe(s *step) error {
	c, err := lookup(r.clients, s.Client, "client")
	if err != nil {
		return err
	}
	o := &observer{}
	r.observers[s.id] = o
	leaders := c.Election(s.Election).Observe(r.ctx)
	go func() {
		for leader := range leaders {
			o.mu.Lock()
			o.seen, o.leader = true, nil
			if leader != nil {
				value := string(leader.Value)
				o.leader = &value
			}
			o.mu.Unlock()
		}
	}()
	return nil
}

func equalLeader(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func show(v *string) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *v)
}

// waitUntil re-checks done every 20 ms until it holds; fails with its description after stepBound.
func waitUntil(done func() (bool, string)) error {
	end := time.Now().Add(stepBound)
	for {
		ok, what := done()
		if ok {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("timed out after %s waiting for %s", stepBound, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lookup[T any](m map[string]T, id, what string) (T, error) {
	v, ok := m[id]
	if !ok {
		return v, fmt.Errorf("no %s %q in this scenario", what, id)
	}
	return v, nil
}
