package turnstile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// The Go driver of the shared client conformance suite (test/conformance/README.md): every file of
// test/conformance/scenarios runs as a subtest against this client, the shared coordinator of
// main_test.go (plus coordinators of its own where a scenario asks) and the test redis-server, as
// the TypeScript and Java drivers run the same files.

// stepBound bounds every wait of a step: long enough for 2 loaded cores, never a speed target.
const stepBound = 20 * time.Second

func TestConformance(t *testing.T) {
	requireTools(t)
	dir := filepath.Join(repoRoot, "test", "conformance")
	t.Run("constants", func(t *testing.T) { checkConstants(t, filepath.Join(dir, "constants.json")) })
	files, err := filepath.Glob(filepath.Join(dir, "scenarios", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s (%v)", dir, err)
	}
	sort.Strings(files)
	for _, file := range files {
		id := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(id, func(t *testing.T) { runScenario(t, file) })
	}
}

// checkConstants compares the client's constants with the shared ones, less Go's listed divergences.
func checkConstants(t *testing.T, file string) {
	var shared struct {
		LeaseMargin struct {
			CapMs    int64 `json:"capMs"`
			Examples []struct {
				TTLMs    int64 `json:"ttlMs"`
				MarginMs int64 `json:"marginMs"`
			} `json:"examples"`
		} `json:"leaseMargin"`
		AnswerGraceMs int64                          `json:"answerGraceMs"`
		ResumeBackoff struct{ FirstMs, MaxMs int64 } `json:"resumeBackoff"`
		WatchBackoff  struct{ FirstMs, MaxMs int64 } `json:"watchBackoff"`
		Divergences   map[string]map[string]int64    `json:"divergences"`
	}
	readJSON(t, file, &shared)
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	for _, e := range shared.LeaseMargin.Examples {
		if got := ms(turnstile.LeaseMarginForTest(time.Duration(e.TTLMs) * time.Millisecond)); got != e.MarginMs {
			t.Errorf("lease margin at ttl %d ms: %d ms, shared %d ms", e.TTLMs, got, e.MarginMs)
		}
	}
	own := map[string]int64{
		"leaseMargin.capMs":     ms(turnstile.LeaseMarginForTest(time.Hour)),
		"answerGraceMs":         ms(turnstile.AnswerGraceForTest),
		"resumeBackoff.firstMs": ms(turnstile.FirstBackoffForTest),
		"resumeBackoff.maxMs":   ms(turnstile.MaxBackoffForTest),
		"watchBackoff.firstMs":  ms(turnstile.FirstBackoffForTest),
		"watchBackoff.maxMs":    ms(turnstile.MaxBackoffForTest),
	}
	want := map[string]int64{
		"leaseMargin.capMs":     shared.LeaseMargin.CapMs,
		"answerGraceMs":         shared.AnswerGraceMs,
		"resumeBackoff.firstMs": shared.ResumeBackoff.FirstMs,
		"resumeBackoff.maxMs":   shared.ResumeBackoff.MaxMs,
		"watchBackoff.firstMs":  shared.WatchBackoff.FirstMs,
		"watchBackoff.maxMs":    shared.WatchBackoff.MaxMs,
	}
	for key, value := range shared.Divergences["go"] {
		if want[key] == value {
			t.Errorf("divergences.go.%s = %d is the shared value: delete the entry", key, value)
		}
		want[key] = value
	}
	if !reflect.DeepEqual(own, want) {
		t.Errorf("the Go client's constants %v, want %v (constants.json with divergences.go)", own, want)
	}
}

func readJSON(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// step is one scenario step: the operation (the first key), its id, and every option a step can carry.
type step struct {
	op, id string
	raw    json.RawMessage

	Via         []string        `json:"via"`
	TTLMs       int64           `json:"ttlMs"`
	To          string          `json:"to"`
	Client      string          `json:"client"`
	Name        string          `json:"name"`
	Names       []string        `json:"names"`
	Election    string          `json:"election"`
	Kind        string          `json:"kind"`
	Limit       uint32          `json:"limit"`
	WaitMs      int64           `json:"waitMs"`
	Owner       string          `json:"owner"`
	LockDelayMs *int64          `json:"lockDelayMs"`
	Try         bool            `json:"try"`
	Expect      json.RawMessage `json:"expect"`
	TokenAbove  string          `json:"tokenAbove"`
	TokenEquals string          `json:"tokenEquals"`
	HoldCount   *uint32         `json:"holdCount"`
	Locks       *int            `json:"locks"`
	Value       json.RawMessage `json:"value"`
	Reason      string          `json:"reason"`
	Before      string          `json:"before"`
	Holders     *int            `json:"holders"`
	Waiters     *int            `json:"waiters"`
	Delay       *bool           `json:"delay"`
}

type expectation struct {
	granted         bool
	Queued          int    `json:"queued"`
	On              string `json:"on"`
	Error           string `json:"error"`
	MessageIncludes string `json:"messageIncludes"`
	BlockedBy       []struct {
		Client, Lock, Name string
	} `json:"blockedBy"`
	Cycle []string `json:"cycle"`
}

type scenarioFile struct {
	Title        string            `json:"title"`
	Coordinators []string          `json:"coordinators"`
	Steps        []json.RawMessage `json:"steps"`
}

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

func parseStep(raw json.RawMessage) (*step, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	key, err := dec.Token()
	if err != nil {
		return nil, err
	}
	op, ok := key.(string)
	if !ok {
		return nil, fmt.Errorf("a step is an object whose first key is its operation")
	}
	var id any
	if err := dec.Decode(&id); err != nil {
		return nil, err
	}
	s := &step{op: op, raw: raw}
	s.id, _ = id.(string)
	return s, json.Unmarshal(raw, s)
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	_ = json.Compact(&b, raw)
	return b.String()
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

func (r *scenarioRun) start(s *step) error {
	c, err := lookup(r.clients, s.Client, "client")
	if err != nil {
		return err
	}
	opts := &turnstile.AcquireOptions{Wait: time.Duration(s.WaitMs) * time.Millisecond, Owner: s.Owner}
	if s.LockDelayMs != nil {
		opts = opts.WithLockDelay(time.Duration(*s.LockDelayMs) * time.Millisecond)
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

func parseExpectation(raw json.RawMessage, e *expectation) error {
	if string(raw) == `"granted"` {
		e.granted = true
		return nil
	}
	return json.Unmarshal(raw, e)
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
			(s.Delay == nil || (d.GetDelayRemaining() != nil) == *s.Delay)
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
