// Command turnstile-example is a Turnstile worker built on the Go client library
// (clients/go). Each worker opens its own session, then runs rounds of acquire → hold → release;
// with -log every worker appends "enter/exit <worker> <token>" lines to one shared file, which is
// how the interop test (test/interop/) checks exclusion.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

func main() {
	addr := flag.String("addr", env("TURNSTILE_ADDR", "127.0.0.1:7420"), "coordinator host:port, or several comma-separated: a session resumes on the next when its coordinator drains (env TURNSTILE_ADDR)")
	lockName := flag.String("lock", env("TURNSTILE_LOCK", "examples/demo"), "lock name (env TURNSTILE_LOCK)")
	rounds := flag.Int("rounds", envInt("TURNSTILE_ROUNDS", 1), "rounds per worker (env TURNSTILE_ROUNDS)")
	workers := flag.Int("workers", envInt("TURNSTILE_WORKERS", 1), "workers, each with its own session (env TURNSTILE_WORKERS)")
	prefix := flag.String("name", env("TURNSTILE_WORKER_NAME", "go"), "worker name prefix: workers are <name>-1, <name>-2, ...")
	logPath := flag.String("log", env("TURNSTILE_LOG", ""), "shared log file to append enter/exit lines to (env TURNSTILE_LOG)")
	hold := flag.Duration("hold", envDuration("TURNSTILE_HOLD", 200*time.Millisecond), "how long each round holds the lock (env TURNSTILE_HOLD)")
	wait := flag.Duration("wait", envDuration("TURNSTILE_WAIT", 30*time.Second), "server-side wait of one acquire before TIMEOUT (env TURNSTILE_WAIT)")
	ttl := flag.Duration("ttl", envDuration("TURNSTILE_TTL", 15*time.Second), "requested session TTL (env TURNSTILE_TTL)")
	ca := flag.String("tls-ca", env("TURNSTILE_TLS_CA", ""), "CA certificate (PEM) to verify the coordinator with: TLS (env TURNSTILE_TLS_CA)")
	cert := flag.String("tls-cert", env("TURNSTILE_TLS_CERT", ""), "client certificate (PEM) for mTLS (env TURNSTILE_TLS_CERT)")
	key := flag.String("tls-key", env("TURNSTILE_TLS_KEY", ""), "client certificate's key (PEM) (env TURNSTILE_TLS_KEY)")
	token := flag.String("token", env("TURNSTILE_TOKEN", ""), "bearer token, sent over TLS only (env TURNSTILE_TOKEN)")
	flag.Parse()
	log.SetFlags(log.Lmicroseconds)

	shared, err := openSharedLog(*logPath)
	if err != nil {
		log.Fatalf("open log: %v", err)
	}
	defer shared.Close()
	opts := turnstile.Options{TTL: *ttl, Token: *token}
	if *ca != "" || *cert != "" || *key != "" {
		if opts.TLS, err = turnstile.LoadTLS(*ca, *cert, *key); err != nil {
			log.Fatalf("connection settings: %v", err)
		}
	}
	addresses := strings.Split(*addr, ",")
	for i := range addresses {
		addresses[i] = strings.TrimSpace(addresses[i])
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, *workers)
	for i := 1; i <= *workers; i++ {
		w := worker{name: fmt.Sprintf("%s-%d", *prefix, i), lock: *lockName, rounds: *rounds, hold: *hold, wait: *wait, log: shared}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.run(ctx, addresses, opts); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := false
	for err := range errs {
		log.Printf("worker failed: %v", err)
		failed = true
	}
	if failed {
		os.Exit(1)
	}
	log.Printf("%d worker(s) finished %d round(s) each", *workers, *rounds)
}

func env(name, fallback string) string {
	if value, ok := os.LookupEnv(name); ok {
		return value
	}
	return fallback
}

func envInt(name string, fallback int) int {
	value, err := strconv.Atoi(env(name, strconv.Itoa(fallback)))
	if err != nil {
		log.Fatalf("%s must be an integer: %v", name, err)
	}
	return value
}

func envDuration(name string, fallback time.Duration) time.Duration {
	value, err := time.ParseDuration(env(name, fallback.String()))
	if err != nil {
		log.Fatalf("%s must be a duration such as 250ms or 2s: %v", name, err)
	}
	return value
}
