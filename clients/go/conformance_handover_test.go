package turnstile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// The hand-over steps of the Go conformance driver (test/conformance/README.md): transfer,
// askRelease, releaseRequested, and the waiters' priorities Describe shows.

// handOverExpectation is "transferred", a holder count, or an error.
type handOverExpectation struct {
	done            bool
	count           *int
	Error           string `json:"error"`
	MessageIncludes string `json:"messageIncludes"`
}

func parseHandOver(raw json.RawMessage) (handOverExpectation, error) {
	var e handOverExpectation
	if string(raw) == `"transferred"` {
		e.done = true
		return e, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		e.count = &n
		return e, nil
	}
	return e, json.Unmarshal(raw, &e)
}

func checkHandOver(id string, want handOverExpectation, count int, err error) error {
	if want.Error == "" {
		if err != nil {
			return fmt.Errorf("%q failed: %v", id, err)
		}
		if want.count != nil && *want.count != count {
			return fmt.Errorf("%q answered %d, want %d", id, count, *want.count)
		}
		return nil
	}
	var terr *turnstile.Error
	if !errors.As(err, &terr) {
		return fmt.Errorf("%q answered (%v); expected %s", id, err, want.Error)
	}
	if string(terr.Reason) != want.Error || !strings.Contains(terr.Error(), want.MessageIncludes) {
		return fmt.Errorf("%q failed %s (%v); expected %s including %q", id, terr.Reason, terr, want.Error, want.MessageIncludes)
	}
	return nil
}

func (r *scenarioRun) transfer(s *step) error {
	lock, err := r.lock(s.id)
	if err != nil {
		return err
	}
	to := ""
	if s.To != "" {
		c, err := lookup(r.clients, s.To, "client")
		if err != nil {
			return err
		}
		to = c.SessionID()
	}
	want, err := parseHandOver(s.Expect)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.ctx, stepBound)
	defer cancel()
	_, err = lock.Transfer(ctx, to, s.ToOwner)
	if err := checkHandOver(s.id, want, 0, err); err != nil {
		return err
	}
	if want.done && lock.Valid() {
		return fmt.Errorf("%q is still valid after its transfer", s.id)
	}
	return nil
}

func (r *scenarioRun) askRelease(s *step) error {
	c, err := lookup(r.clients, s.id, "client")
	if err != nil {
		return err
	}
	want, err := parseHandOver(s.Expect)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.ctx, stepBound)
	defer cancel()
	n, err := c.RequestRelease(ctx, s.Name, s.Reason)
	return checkHandOver(s.id, want, n, err)
}

func (r *scenarioRun) releaseRequested(s *step) error {
	lock, err := r.lock(s.id)
	if err != nil {
		return err
	}
	from, err := lookup(r.clients, s.From, "client")
	if err != nil {
		return err
	}
	select {
	case got := <-lock.ReleaseRequests():
		if got.Reason != s.Reason || got.SessionID != from.SessionID() {
			return fmt.Errorf("%q was asked %+v; want reason %q from %s", s.id, got, s.Reason, from.SessionID())
		}
		return nil
	case <-time.After(stepBound):
		return fmt.Errorf("%q was not asked to let go within %s", s.id, stepBound)
	}
}

func waiterPriorities(d *pb.DescribeResponse) []int32 {
	priorities := make([]int32, 0, len(d.GetWaiters()))
	for _, w := range d.GetWaiters() {
		priorities = append(priorities, w.GetPriority())
	}
	return priorities
}
