package turnstile_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/redis/go-redis/v9"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
	"github.com/turnstile-locks/turnstile/clients/go/fencing"
)

// The child mode of the test binary: a holder that writes through the Redis guard (see
// fencedWriterChild), started by TestFencing with this variable set.
const fencedWriterEnv = "TURNSTILE_GO_FENCED_WRITER"

// fencingSetup is a coordinator signing with key 2 and publishing key 1 too (rotated), one that
// signed with key 1 before the rotation, and the guard's Redis client and key fetcher.
type fencingSetup struct {
	main, retired *coordinator
	jwksURL       string
	keys          *fencing.JWKSFetcher
	redis         *redis.Client
	retiredKID    string
}

func newFencingSetup(t *testing.T) *fencingSetup {
	dir := t.TempDir()
	var files []string
	for i := 1; i <= 2; i++ {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, fmt.Sprintf("fencing-%d.pem", i))
		if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	httpAddr := fmt.Sprintf("127.0.0.1:%d", port)
	s := &fencingSetup{
		main:    newCoordinator(t, "--fencing-key", files[1], "--fencing-key", files[0], "--http", httpAddr),
		retired: newCoordinator(t, "--fencing-key", files[0]),
		jwksURL: "http://" + httpAddr + "/.well-known/jwks.json",
	}
	s.keys = fencing.NewJWKSFetcher(httpAddr)
	s.keys.HTTPClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	s.redis = redis.NewClient(opts)
	t.Cleanup(func() { _ = s.redis.Close() })
	return s
}

func (s *fencingSetup) guard() *fencing.RedisGuard {
	return &fencing.RedisGuard{Redis: s.redis, Keys: s.keys}
}

// refusal is the Refusal err carries; the test fails when err is not a fencing refusal.
func refusal(t *testing.T, err error) fencing.Refusal {
	t.Helper()
	var e *fencing.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a fencing refusal, got %v", err)
	}
	return e.Refusal
}

// forgedProof claims fence for lock under kid, signed by a key no coordinator has.
func forgedProof(t *testing.T, lock, fence, kid string) string {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(map[string]string{"alg": "EdDSA", "kid": kid, "typ": "JWT"}) + "." + enc(map[string]any{
		"iss": "turnstile", "iat": time.Now().Unix(), "lock": lock, "fence": fence,
		"caller": "", "client": "mallory", "session": "s", "owner": "o",
	})
	return input + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(input)))
}

// writerChild is the test binary in its fenced-writer mode, holding one lock.
type writerChild struct {
	*process
	stdin *os.File
	token uint64
	lines int
}

func startWriterChild(t *testing.T, s *fencingSetup, name string) *writerChild {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &watchedOutput{changed: make(chan struct{})}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), fencedWriterEnv+"="+strings.Join([]string{s.main.address, name, "1500ms", s.jwksURL, redisURL}, "|"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, out, out
	dieWithTests(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	p := &process{name: "fenced writer", cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		p.kill()
		w.Close()
	})
	m, err := p.waitFor(regexp.MustCompile(`acquired (\d+)\n`), eventually)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := strconv.ParseUint(m[1], 10, 64)
	return &writerChild{process: p, stdin: w, token: token}
}

// write asks the child for one guarded write and returns its answer: "written" or the refusal.
func (c *writerChild) write(t *testing.T, key, value string) string {
	c.lines++
	if _, err := fmt.Fprintf(c.stdin, "%s %s\n", key, value); err != nil {
		t.Fatal(err)
	}
	m, err := c.waitFor(regexp.MustCompile(fmt.Sprintf(`(?m)^answer %d (\S+)$`, c.lines)), eventually)
	if err != nil {
		t.Fatal(err)
	}
	return m[1]
}

// fencedWriterChild acquires the lock and, per stdin line "KEY VALUE", writes VALUE through the
// Redis guard with its proof, whether or not it still holds the lock (it plays a holder that does
// not know it was paused), answering "answer N written" or "answer N REFUSAL".
func fencedWriterChild(spec string) int {
	parts := strings.Split(spec, "|")
	address, name, jwksURL, url := parts[0], parts[1], parts[3], parts[4]
	ttl, _ := time.ParseDuration(parts[2])
	ctx := context.Background()
	client, err := turnstile.NewClient([]string{address}, turnstile.Options{TTL: ttl})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	lock, err := client.Acquire(ctx, name, nil)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	opts, _ := redis.ParseURL(url)
	guard := &fencing.RedisGuard{Redis: redis.NewClient(opts), Keys: fencing.NewJWKSFetcher(jwksURL)}
	fmt.Printf("acquired %d\n", lock.Token())
	in := bufio.NewScanner(os.Stdin)
	for n := 1; in.Scan(); n++ {
		fields := strings.Fields(in.Text())
		_, err := guard.Write(ctx, lock.FencingProof(), fields[0], fields[1], name)
		var e *fencing.Error
		switch {
		case err == nil:
			fmt.Printf("answer %d written\n", n)
		case errors.As(err, &e):
			fmt.Printf("answer %d %s\n", n, e.Refusal)
		default:
			fmt.Printf("answer %d error %v\n", n, err)
		}
	}
	return 0
}

func TestFencing(t *testing.T) {
	requireTools(t)
	s := newFencingSetup(t)
	ctx := testContext(t)

	t.Run("PausedHolderIsRefused", func(t *testing.T) {
		// Holder A is SIGSTOPped past its lease; B acquires and writes; A wakes and writes: refused.
		name, key := lockName(t), "guarded:go:paused"
		a := startWriterChild(t, s, name)
		if got := a.write(t, key, "from-A-while-holding"); got != "written" {
			t.Fatalf("A's write while holding: %s", got)
		}
		if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		b, err := newClient(t, []string{s.main.address}, turnstile.Options{}).Acquire(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b.Token() <= a.token {
			t.Fatalf("B's token %d is not above A's %d", b.Token(), a.token)
		}
		if _, err := s.guard().Write(ctx, b.FencingProof(), key, "from-B", name); err != nil {
			t.Fatal(err)
		}
		if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		if got := a.write(t, key, "from-A-after-pause"); got != string(fencing.Stale) {
			t.Fatalf("A's write after the pause: %s, want %s", got, fencing.Stale)
		}
		if v := s.redis.Get(ctx, key).Val(); v != "from-B" {
			t.Fatalf("the resource holds %q, want B's value", v)
		}
		if f := s.redis.Get(ctx, fencing.FenceKey(key)).Val(); f != strconv.FormatUint(b.Token(), 10) {
			t.Fatalf("the fence is %s, want B's token %d", f, b.Token())
		}
	})

	t.Run("ForgedFenceIsRefusedAndTheResourceStaysUsable", func(t *testing.T) {
		name, key := lockName(t), "guarded:go:forged"
		c := newClient(t, []string{s.main.address}, turnstile.Options{})
		lock, err := c.Acquire(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.guard().Write(ctx, lock.FencingProof(), key, "real", name); err != nil {
			t.Fatal(err)
		}
		set, err := s.keys.Keys(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		forged := new(big.Int).Lsh(big.NewInt(1), 63).String()
		_, err = s.guard().Write(ctx, forgedProof(t, name, forged, set.Keys[0].KeyID), key, "forged", name)
		if r := refusal(t, err); r != fencing.BadSignature {
			t.Fatalf("forged proof: %s, want %s", r, fencing.BadSignature)
		}
		_, err = s.guard().Write(ctx, forged, key, "forged", name)
		if r := refusal(t, err); r != fencing.Malformed {
			t.Fatalf("a bare number: %s, want %s", r, fencing.Malformed)
		}
		if v := s.redis.Get(ctx, key).Val(); v != "real" {
			t.Fatalf("the resource holds %q after forgeries", v)
		}
		if err := lock.Release(ctx); err != nil {
			t.Fatal(err)
		}
		next, err := c.Acquire(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.guard().Write(ctx, next.FencingProof(), key, "next", name); err != nil {
			t.Fatalf("the next holder's write: %v", err)
		}
	})

	t.Run("ProofForAnotherLockIsRefused", func(t *testing.T) {
		other, err := newClient(t, []string{s.main.address}, turnstile.Options{}).Acquire(ctx, lockName(t)+"/other", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.guard().Write(ctx, other.FencingProof(), "guarded:go:named", "x", lockName(t))
		if r := refusal(t, err); r != fencing.WrongLock {
			t.Fatalf("another lock's proof: %s, want %s", r, fencing.WrongLock)
		}
		if n := s.redis.Exists(ctx, "guarded:go:named").Val(); n != 0 {
			t.Fatal("the refused write reached the resource")
		}
	})

	t.Run("RetiredKeyStillAcceptedWhilePublished", func(t *testing.T) {
		name := lockName(t)
		old, err := newClient(t, []string{s.retired.address}, turnstile.Options{}).Acquire(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		claims, err := s.guard().Write(ctx, old.FencingProof(), "guarded:go:rotated", "old-key", name)
		if err != nil {
			t.Fatalf("a proof of the retired, still published key: %v", err)
		}
		set, err := s.keys.Keys(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if claims.KeyID != set.Keys[1].KeyID || claims.Fence != old.Token() {
			t.Fatalf("claims %+v: want the retired key %s and token %d", claims, set.Keys[1].KeyID, old.Token())
		}
		current := fencing.StaticKeys(&jose.JSONWebKeySet{Keys: set.Keys[:1]})
		if _, err := fencing.Verify(ctx, old.FencingProof(), current, fencing.VerifyOptions{}); refusal(t, err) != fencing.UnknownKID {
			t.Fatalf("once unpublished: %v, want %s", err, fencing.UnknownKID)
		}
	})

	t.Run("LockSetGivesEachLocksProof", func(t *testing.T) {
		name := lockName(t)
		set, err := newClient(t, []string{s.main.address}, turnstile.Options{}).AcquireAll(ctx, []turnstile.Claim{{Name: name + "/a"}, {Name: name + "/b"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{name + "/a", name + "/b"} {
			l := set.Lock(n)
			claims, err := fencing.Verify(ctx, l.FencingProof(), s.keys, fencing.VerifyOptions{Lock: l.Name()})
			if err != nil || claims.Fence != l.Token() {
				t.Fatalf("lock %s: %+v, %v", l.Name(), claims, err)
			}
		}
	})

	t.Run("JWKSFetcherRefetchesOnUnknownKID", func(t *testing.T) {
		// The first answer predates the rotation (the retired key only); the next is the coordinator's.
		served := 0
		stale, err := s.keys.Keys(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		old, _ := json.Marshal(jose.JSONWebKeySet{Keys: stale.Keys[1:]})
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served++
			if served == 1 {
				_, _ = w.Write(old)
				return
			}
			res, err := http.Get(s.jwksURL)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer res.Body.Close()
			_, _ = io.Copy(w, res.Body)
		}))
		defer server.Close()
		fetcher := fencing.NewJWKSFetcher(server.URL)
		fetcher.RefreshCooldown = time.Nanosecond
		fetcher.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		lock, err := newClient(t, []string{s.main.address}, turnstile.Options{}).Acquire(ctx, lockName(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fencing.Verify(ctx, lock.FencingProof(), fetcher, fencing.VerifyOptions{Lock: lockName(t)}); err != nil {
			t.Fatal(err)
		}
		if _, err := fencing.Verify(ctx, lock.FencingProof(), fetcher, fencing.VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
		if fetcher.Fetches() != 2 {
			t.Fatalf("%d fetches, want 2: one stale, one on the unknown kid, then the cache", fetcher.Fetches())
		}
	})

	t.Run("CheckFence", func(t *testing.T) {
		name := lockName(t)
		c := newClient(t, []string{s.main.address}, turnstile.Options{})
		a, err := c.Acquire(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.CheckFence(ctx, name, a.Token()); err != nil || got.Status != turnstile.FenceCurrent {
			t.Fatalf("held: %+v, %v", got, err)
		}
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		b, err := c.Acquire(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.CheckFence(ctx, name, a.Token()); err != nil || got != (turnstile.FenceCheck{Status: turnstile.FenceSuperseded, NewerToken: b.Token()}) {
			t.Fatalf("after the next grant: %+v, %v", got, err)
		}
		_ = b.Release(ctx)
		if got, err := c.CheckFence(ctx, name, b.Token()); err != nil || got.Status != turnstile.FenceUnknown {
			t.Fatalf("released: %+v, %v", got, err)
		}
	})
}
