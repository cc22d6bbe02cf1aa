package turnstile_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// testPKI is a throwaway CA made with openssl, signing a server certificate for 127.0.0.1 and
// client certificates.
type testPKI struct {
	dir, ca, caKey string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	p := &testPKI{dir: dir, ca: filepath.Join(dir, "ca.crt"), caKey: filepath.Join(dir, "ca.key")}
	p.openssl(t, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-keyout", p.caKey, "-out", p.ca, "-days", "2", "-subj", "/CN=turnstile-go-test-ca")
	return p
}

// leaf makes name.crt and name.key for cn with subjectAltName san ("" for none).
func (p *testPKI) leaf(t *testing.T, name, cn, san string) (cert, key string) {
	t.Helper()
	at := func(ext string) string { return filepath.Join(p.dir, name+"."+ext) }
	p.openssl(t, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-keyout", at("key"), "-out", at("csr"), "-subj", "/CN="+cn)
	ext := "basicConstraints=CA:FALSE\n"
	if san != "" {
		ext = "subjectAltName=" + san + "\n"
	}
	if err := os.WriteFile(at("ext"), []byte(ext), 0o600); err != nil {
		t.Fatal(err)
	}
	p.openssl(t, "x509", "-req", "-in", at("csr"), "-CA", p.ca, "-CAkey", p.caKey, "-CAcreateserial",
		"-out", at("crt"), "-days", "1", "-extfile", at("ext"))
	return at("crt"), at("key")
}

func (p *testPKI) openssl(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
		t.Fatalf("openssl %v: %v\n%s", args, err, out)
	}
}

func TestMutualTLS(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	pki := newTestPKI(t)
	serverCert, serverKey := pki.leaf(t, "server", "127.0.0.1", "IP:127.0.0.1,DNS:localhost")
	clientCert, clientKey := pki.leaf(t, "client", "go-client", "")
	coord := newCoordinator(t, "--tls-cert", serverCert, "--tls-key", serverKey, "--tls-client-ca", pki.ca)

	withCert, err := turnstile.LoadTLS(pki.ca, clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	client := newClient(t, []string{coord.address}, turnstile.Options{TLS: withCert})
	lock, err := client.Acquire(ctx, lockName(t), nil)
	if err != nil {
		t.Fatalf("acquire over mTLS: %v", err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Without a client certificate the coordinator refuses the session.
	caOnly, err := turnstile.LoadTLS(pki.ca, "", "")
	if err != nil {
		t.Fatal(err)
	}
	anonymous := newClient(t, []string{coord.address}, turnstile.Options{TLS: caOnly})
	_, err = anonymous.Acquire(ctx, lockName(t), nil)
	if !errors.Is(err, turnstile.ErrConnection) {
		t.Fatalf("acquire without a client certificate: %v, want a connection error", err)
	}
	t.Logf("without a client certificate: %v", err)
	if _, err := turnstile.LoadTLS(pki.ca, clientCert, ""); err == nil {
		t.Fatal("LoadTLS took a certificate without its key")
	}
}

func TestBearerTokenOverTLS(t *testing.T) {
	requireTools(t)
	ctx := testContext(t)
	pki := newTestPKI(t)
	serverCert, serverKey := pki.leaf(t, "server", "127.0.0.1", "IP:127.0.0.1,DNS:localhost")
	const token = "go-test-token-8f3a1c"
	sum := sha256.Sum256([]byte(token))
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte(fmt.Sprintf("go-token-user %s\n", hex.EncodeToString(sum[:]))), 0o600); err != nil {
		t.Fatal(err)
	}
	coord := newCoordinator(t, "--tls-cert", serverCert, "--tls-key", serverKey, "--token-file", tokens)
	tlsConfig, err := turnstile.LoadTLS(pki.ca, "", "")
	if err != nil {
		t.Fatal(err)
	}

	client := newClient(t, []string{coord.address}, turnstile.Options{TLS: tlsConfig, Token: token})
	lock, err := client.Acquire(ctx, lockName(t), nil)
	if err != nil {
		t.Fatalf("acquire with the bearer token: %v", err)
	}
	_ = lock.Release(ctx)

	wrong := newClient(t, []string{coord.address}, turnstile.Options{TLS: tlsConfig, Token: "not-the-token"})
	if _, err := wrong.Acquire(ctx, lockName(t), nil); !errors.Is(err, turnstile.ErrConnection) {
		t.Fatalf("acquire with a wrong token: %v, want a connection error", err)
	}
	if _, err := turnstile.NewClient([]string{coord.address}, turnstile.Options{Token: token}); !errors.Is(err, turnstile.ErrInvalidArgument) {
		t.Fatalf("a token without TLS: %v, want invalid-argument", err)
	}
}
