package turnstile_test

import (
	"context"
	"errors"
	"log"
	"time"

	turnstile "github.com/turnstile-locks/turnstile/clients/go"
)

// Examples for the package documentation; they compile with the tests but do not run (no Output).

func ExampleClient_WithLock() {
	client, err := turnstile.NewClient([]string{"127.0.0.1:7420"}, turnstile.Options{ClientName: "billing"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close(context.Background())
	err = client.WithLock(context.Background(), "orders/42", func(ctx context.Context, lock *turnstile.Lock) error {
		// ctx is cancelled the moment the lock may be lost; pass the token to what the lock protects.
		log.Printf("holding orders/42 with fencing token %d", lock.Token())
		return nil
	}, &turnstile.AcquireOptions{Wait: 30 * time.Second})
	var e *turnstile.Error
	if errors.Is(err, turnstile.ErrTimeout) && errors.As(err, &e) {
		for _, b := range e.BlockedBy {
			log.Printf("waited behind %s of %s for %s", b.Owner, b.ClientName, b.HeldFor)
		}
	}
}

func ExampleLock_Done() {
	client, err := turnstile.NewClient([]string{"127.0.0.1:7420"}, turnstile.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close(context.Background())
	lock, err := client.Acquire(context.Background(), "reports/daily", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer lock.Release(context.Background())
	work := make(chan string)
	go func() { work <- "report" }()
	select {
	case <-lock.Done(): // told first: closed before anyone else can be granted the lock
		log.Printf("stopping: %v", lock.Err())
	case report := <-work:
		if lock.Valid() { // the local lease, checked right before the use
			log.Printf("publishing %s under token %d", report, lock.Token())
		}
	}
}

func ExampleElection_Observe() {
	client, err := turnstile.NewClient([]string{"127.0.0.1:7420"}, turnstile.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for leader := range client.Election("billing/leader").Observe(ctx) {
		if leader == nil {
			log.Print("no leader")
			continue
		}
		log.Printf("leader %s (token %d)", leader.Value, leader.Token)
	}
}
