package turnstile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
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
		"watchBackoff.firstMs":  ms(turnstile.FirstWatchBackoffForTest),
		"watchBackoff.maxMs":    ms(turnstile.MaxWatchBackoffForTest),
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
	ValueBytes  int             `json:"valueBytes"`
	Reason      string          `json:"reason"`
	Before      string          `json:"before"`
	Holders     *int            `json:"holders"`
	Waiters     *int            `json:"waiters"`
	Delay       *bool           `json:"delay"`
	Priority    int32           `json:"priority"`
	AskToYield  string          `json:"askToYield"`
	ToOwner     string          `json:"toOwner"`
	From        string          `json:"from"`
	Priorities  []int32         `json:"priorities"`
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

func parseExpectation(raw json.RawMessage, e *expectation) error {
	if string(raw) == `"granted"` {
		e.granted = true
		return nil
	}
	return json.Unmarshal(raw, e)
}
