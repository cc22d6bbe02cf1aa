package fencing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// KeySource gives the coordinators' published keys; with refresh, a fetching source reads them
// again (a proof named an unknown kid).
type KeySource interface {
	Keys(ctx context.Context, refresh bool) (*jose.JSONWebKeySet, error)
}

// StaticKeys is a fixed key set (e.g. the output of `turnstile keys`).
func StaticKeys(set *jose.JSONWebKeySet) KeySource { return staticKeys{set} }

type staticKeys struct{ set *jose.JSONWebKeySet }

func (s staticKeys) Keys(context.Context, bool) (*jose.JSONWebKeySet, error) { return s.set, nil }

// ParseKeys reads a JWK Set document ({"keys": [...]}).
func ParseKeys(document []byte) (*jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(document, &set); err != nil {
		return nil, fmt.Errorf("fencing: not a JWK Set: %w", err)
	}
	return &set, nil
}

// JWKSFetcher reads the keys from a coordinator's JWKS endpoint: fetched on first use, cached for
// MaxAge, and fetched again when a proof names an unknown kid (at most once per RefreshCooldown).
// A failed fetch keeps serving the last keys it had. Safe for concurrent use.
type JWKSFetcher struct {
	// URL of the key set; NewJWKSFetcher accepts the --http HOST:PORT too.
	URL string
	// MaxAge of fetched keys (default 5 min).
	MaxAge time.Duration
	// RefreshCooldown is the least time between fetches forced by unknown kids (default 30 s).
	RefreshCooldown time.Duration
	// HTTPClient to fetch with (default: one with a 5 s timeout).
	HTTPClient *http.Client

	mu        sync.Mutex
	set       *jose.JSONWebKeySet
	fetchedAt time.Time
	fetches   int
}

// NewJWKSFetcher fetches from url: a JWKS URL, or the coordinator's --http HOST:PORT (then
// http://HOST:PORT/.well-known/jwks.json).
func NewJWKSFetcher(url string) *JWKSFetcher {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		url = "http://" + url + "/.well-known/jwks.json"
	}
	return &JWKSFetcher{URL: url}
}

// Fetches is how many times the key set was fetched.
func (f *JWKSFetcher) Fetches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches
}

// Keys returns the cached keys, fetching them when there are none, they are older than MaxAge,
// or refresh is set and the last fetch is older than RefreshCooldown.
func (f *JWKSFetcher) Keys(ctx context.Context, refresh bool) (*jose.JSONWebKeySet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	maxAge, cooldown := f.MaxAge, f.RefreshCooldown
	if maxAge == 0 {
		maxAge = 5 * time.Minute
	}
	if cooldown == 0 {
		cooldown = 30 * time.Second
	}
	age := time.Since(f.fetchedAt)
	if f.set != nil && age < maxAge && (!refresh || age < cooldown) {
		return f.set, nil
	}
	set, err := f.fetch(ctx)
	if err != nil {
		if f.set != nil {
			return f.set, nil
		}
		return nil, fmt.Errorf("fencing: cannot fetch the keys from %s: %w", f.URL, err)
	}
	f.set = set
	return set, nil
}

func (f *JWKSFetcher) fetch(ctx context.Context) (*jose.JSONWebKeySet, error) {
	f.fetchedAt = time.Now()
	f.fetches++
	client := f.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", res.StatusCode)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(res.Body).Decode(&set); err != nil {
		return nil, err
	}
	return &set, nil
}
