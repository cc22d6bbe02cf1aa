package turnstile_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// process is a child process (redis-server, a coordinator) whose merged output the test can wait on.
type process struct {
	name   string
	cmd    *exec.Cmd
	out    *watchedOutput
	exited chan struct{} // closed when the process has exited and been reaped
}

// watchedOutput collects a process's output and wakes waiters on every write.
type watchedOutput struct {
	mu      sync.Mutex
	text    bytes.Buffer
	changed chan struct{}
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *watchedOutput) snapshot() (string, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.text.String(), w.changed
}

// startProcess runs name args with stdout and stderr collected.
func startProcess(name string, args ...string) (*process, error) {
	out := &watchedOutput{changed: make(chan struct{})}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	dieWithTests(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{name: name, cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitFor returns the first match of pattern in the output, or an error if the process exits
// first or timeout passes.
func (p *process) waitFor(pattern *regexp.Regexp, timeout time.Duration) ([]string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		text, changed := p.out.snapshot()
		if m := pattern.FindStringSubmatch(text); m != nil {
			return m, nil
		}
		select {
		case <-changed:
		case <-p.exited:
			text, _ = p.out.snapshot()
			if m := pattern.FindStringSubmatch(text); m != nil {
				return m, nil
			}
			return nil, fmt.Errorf("%s exited before %s; output:\n%s", p.name, pattern, text)
		case <-deadline.C:
			return nil, fmt.Errorf("%s: no %s within %s; output:\n%s", p.name, pattern, timeout, text)
		}
	}
}

// signal sends sig and waits (up to timeout) for the process to exit; it reports whether it did.
func (p *process) signal(sig syscall.Signal, timeout time.Duration) bool {
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
		return true
	case <-time.After(timeout):
		return false
	}
}

// kill SIGKILLs the process (if still running) and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

func (p *process) exitCode() int { return p.cmd.ProcessState.ExitCode() }

// output is everything the process printed so far.
func (p *process) output() string {
	text, _ := p.out.snapshot()
	return text
}

// stopOnCleanup kills the process when the test ends.
func stopOnCleanup(t testing.TB, p *process) {
	t.Cleanup(p.kill)
}
