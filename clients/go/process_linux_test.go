package turnstile_test

import (
	"os/exec"
	"syscall"
)

// dieWithTests makes the child get SIGKILL when the test binary dies, even by a panic that skips
// every cleanup, so no redis-server or coordinator outlives the tests.
func dieWithTests(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
