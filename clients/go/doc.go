// Package turnstile is the Go client of Turnstile, a lock coordinator for polyglot fleets.
//
// A Client keeps one session (one gRPC stream) with a coordinator and carries every lock it
// holds or waits for on it: keepalives every ttl/3, answers routed by request id, resume on
// another coordinator when one drains or dies. Locks are told first: a Lock's Done channel is
// closed as soon as the client can no longer be sure it holds the lock — the server said so, the
// session ended, or the client's own lease clock (measured from the send time of the newest
// acknowledged keepalive) ran out — which is always before the coordinator can grant it to
// anyone else. See docs/protocol.md and docs/clients.md in the repository.
//
//	client, err := turnstile.NewClient([]string{"127.0.0.1:7420"}, turnstile.Options{ClientName: "billing"})
//	if err != nil { ... }
//	defer client.Close(context.Background())
//	err = client.WithLock(ctx, "orders/42", func(ctx context.Context, lock *turnstile.Lock) error {
//		return save(ctx, lock.Token()) // ctx is cancelled the moment the lock may be lost
//	}, nil)
package turnstile
