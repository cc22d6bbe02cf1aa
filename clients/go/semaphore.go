package turnstile

import (
	"context"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// Semaphore is a name held SHARED by at most Limit holders at once across every client
// (docs/semaphores.md). Each permit is a *Lock with its own lease, Done and fencing token. The
// first claim on an idle name sets the limit; a claim with another limit fails with ReasonConflict.
type Semaphore struct {
	client *Client
	name   string
	limit  uint32
}

// Semaphore returns the semaphore name with limit permits (1 or more).
func (c *Client) Semaphore(name string, limit uint32) *Semaphore {
	return &Semaphore{client: c, name: name, limit: limit}
}

func (s *Semaphore) claim() claim {
	return claim{mode: pb.LockMode_LOCK_MODE_SHARED, limit: s.limit}
}

// check refuses a zero limit before anything is sent (0 would mean "unlimited" on the wire).
func (s *Semaphore) check() error {
	if s.limit == 0 {
		return &Error{Reason: ReasonInvalidArgument, Name: s.name, Message: "semaphore limit: must be 1 or more"}
	}
	return nil
}

// Acquire waits for a permit, as Client.Acquire waits for a lock.
func (s *Semaphore) Acquire(ctx context.Context, opts *AcquireOptions) (*Lock, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.client.acquire(ctx, s.name, s.claim(), opts, false)
}

// TryAcquire takes a permit if one is free and nobody waits; otherwise it fails with ReasonBusy.
func (s *Semaphore) TryAcquire(ctx context.Context, opts *AcquireOptions) (*Lock, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.client.acquire(ctx, s.name, s.claim(), opts, true)
}

// WithPermit runs fn holding a permit, as Client.WithLock.
func (s *Semaphore) WithPermit(ctx context.Context, fn func(ctx context.Context, permit *Lock) error, opts *AcquireOptions) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.client.withClaim(ctx, s.name, s.claim(), opts, fn)
}

// ReadWriteLock is a name whose readers share it (SHARED, no limit) and whose writers hold it
// alone (EXCLUSIVE), in one FIFO queue: a queued writer blocks readers that come after it.
type ReadWriteLock struct {
	client *Client
	name   string
}

// ReadWriteLock returns the read-write lock name.
func (c *Client) ReadWriteLock(name string) *ReadWriteLock {
	return &ReadWriteLock{client: c, name: name}
}

var readers = claim{mode: pb.LockMode_LOCK_MODE_SHARED}

// Read waits for a read hold.
func (rw *ReadWriteLock) Read(ctx context.Context, opts *AcquireOptions) (*Lock, error) {
	return rw.client.acquire(ctx, rw.name, readers, opts, false)
}

// TryRead takes a read hold if that needs no wait; otherwise it fails with ReasonBusy.
func (rw *ReadWriteLock) TryRead(ctx context.Context, opts *AcquireOptions) (*Lock, error) {
	return rw.client.acquire(ctx, rw.name, readers, opts, true)
}

// WithRead runs fn holding a read hold, as Client.WithLock.
func (rw *ReadWriteLock) WithRead(ctx context.Context, fn func(ctx context.Context, lock *Lock) error, opts *AcquireOptions) error {
	return rw.client.withClaim(ctx, rw.name, readers, opts, fn)
}

// Write waits for the write hold.
func (rw *ReadWriteLock) Write(ctx context.Context, opts *AcquireOptions) (*Lock, error) {
	return rw.client.acquire(ctx, rw.name, exclusive, opts, false)
}

// TryWrite takes the write hold if that needs no wait; otherwise it fails with ReasonBusy.
func (rw *ReadWriteLock) TryWrite(ctx context.Context, opts *AcquireOptions) (*Lock, error) {
	return rw.client.acquire(ctx, rw.name, exclusive, opts, true)
}

// WithWrite runs fn holding the write hold, as Client.WithLock.
func (rw *ReadWriteLock) WithWrite(ctx context.Context, fn func(ctx context.Context, lock *Lock) error, opts *AcquireOptions) error {
	return rw.client.withClaim(ctx, rw.name, exclusive, opts, fn)
}
