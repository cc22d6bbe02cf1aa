package turnstile_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// The tests run against a real redis-server (started here on a free port) and real coordinators
// (`node bin/turnstile.js serve`, the compiled CLI of this repository). Without redis-server or
// node every test skips saying why — unless CI=true or TURNSTILE_REQUIRE_REDIS=1, where that fails.
var (
	skipReason string
	redisURL   string
	repoRoot   string
	shared     *coordinator // one coordinator for the tests that need nothing special
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if spec := os.Getenv(fencedWriterEnv); spec != "" {
		return fencedWriterChild(spec)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	repoRoot = root
	if skipReason = missingTools(); skipReason != "" {
		if os.Getenv("CI") == "true" || os.Getenv("TURNSTILE_REQUIRE_REDIS") == "1" {
			fmt.Fprintf(os.Stderr, "clients/go tests: %s (CI=true or TURNSTILE_REQUIRE_REDIS=1: failing instead of skipping)\n", skipReason)
			return 1
		}
		fmt.Fprintf(os.Stderr, "clients/go tests: skipping every test: %s\n", skipReason)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "turnstile-go-redis-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	redis, url, err := startRedis(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer redis.kill()
	redisURL = url
	if shared, err = startCoordinator(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer shared.kill()
	return m.Run()
}

// missingTools says what is missing to run the tests ("" when nothing is).
func missingTools() string {
	for _, tool := range []string{"redis-server", "node", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not found on PATH (Debian: apt-get install redis-server nodejs openssl)"
		}
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "dist", "bin", "turnstile-cli.js")); err != nil {
		return "the coordinator is not built (dist/bin/turnstile-cli.js): run `npm ci` or `npm run build` at the repository root"
	}
	return ""
}

// requireTools skips the test when the harness could not start (see TestMain).
func requireTools(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// startRedis starts redis-server on a free port with its data directory dir (nothing persisted).
func startRedis(dir string) (*process, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	p, err := startProcess("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no")
	if err != nil {
		return nil, "", err
	}
	if _, err := p.waitFor(regexp.MustCompile(`Ready to accept connections`), 10*time.Second); err != nil {
		p.kill()
		return nil, "", err
	}
	return p, fmt.Sprintf("redis://127.0.0.1:%d", port), nil
}

// freePort asks the OS for a free loopback port (there is a small race until redis binds it).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// coordinator is a `turnstile serve` child process on a free port.
type coordinator struct {
	*process
	address string
}

var listening = regexp.MustCompile(`"port":(\d+)[^\n]*"msg":"listening"`)

// startCoordinator starts `turnstile serve` against the test Redis with extra flags and returns
// once it listens, with the address it bound.
func startCoordinator(args ...string) (*coordinator, error) {
	return startCoordinatorOn(redisURL, args...)
}

// startCoordinatorOn is startCoordinator against the Redis at url.
func startCoordinatorOn(url string, args ...string) (*coordinator, error) {
	all := append([]string{filepath.Join(repoRoot, "bin", "turnstile.js"), "serve", "--redis", url, "--listen", "127.0.0.1:0"}, args...)
	p, err := startProcess("node", all...)
	if err != nil {
		return nil, err
	}
	m, err := p.waitFor(listening, 30*time.Second)
	if err != nil {
		p.kill()
		return nil, err
	}
	return &coordinator{process: p, address: "127.0.0.1:" + m[1]}, nil
}

// newCoordinator starts a coordinator for one test and stops it when the test ends.
func newCoordinator(t *testing.T, args ...string) *coordinator {
	t.Helper()
	c, err := startCoordinator(args...)
	if err != nil {
		t.Fatal(err)
	}
	stopOnCleanup(t, c.process)
	return c
}
