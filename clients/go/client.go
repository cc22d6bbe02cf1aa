package turnstile

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// Client is a connection to a fleet of coordinators (several addresses of one Redis). It opens
// one session on first use, on the first address that answers, and resumes it on the next when
// its coordinator drains or dies. Safe for concurrent use. Close it to release everything and
// stop its goroutines.
type Client struct {
	opts      Options
	addresses []string
	conns     []*grpc.ClientConn
	stubs     []pb.LockServiceClient

	// root is cancelled by Close: it ends Observe goroutines.
	root     context.Context
	stopRoot context.CancelFunc
	workers  sync.WaitGroup

	mu      sync.Mutex // guards sess, opening and closed; never held while a session opens
	sess    *session
	opening *openCall // the open in progress, nil when none
	closed  bool
	owners  atomic.Uint64
}

// openCall is an open in progress: the caller that started it opens (bounded by its ctx); every
// other caller waits for done, or for its own ctx. cancel ends the open (Close).
type openCall struct {
	done   chan struct{} // closed once the open is over (err set)
	cancel context.CancelFunc
	err    error
	// again: the open ended because its caller's ctx did (or Close), not because no coordinator
	// answered; a waiter whose own ctx goes on opens again.
	again bool
}

// NewClient makes a client of the coordinators at addresses ("host:port" each). It connects
// lazily: the first acquire opens the session.
func NewClient(addresses []string, opts Options) (*Client, error) {
	if len(addresses) == 0 {
		return nil, &Error{Reason: ReasonInvalidArgument, Message: "addresses: at least one coordinator address is needed"}
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	dial, err := dialOptions(opts)
	if err != nil {
		return nil, err
	}
	c := &Client{opts: opts, addresses: addresses}
	for _, address := range addresses {
		conn, err := grpc.NewClient(address, dial...)
		if err != nil {
			c.closeConns()
			return nil, &Error{Reason: ReasonInvalidArgument, Message: fmt.Sprintf("addresses: %q", address), Err: err}
		}
		c.conns = append(c.conns, conn)
		c.stubs = append(c.stubs, pb.NewLockServiceClient(conn))
	}
	c.root, c.stopRoot = context.WithCancel(context.Background())
	return c, nil
}

// session returns the open session, opening a new one (bounded by ctx) if there is none or the
// last one ended. The open runs outside c.mu: a caller that finds one in progress waits for it or
// for its own ctx, whichever ends first.
func (c *Client) session(ctx context.Context) (*session, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, errClientClosed()
		}
		if c.sess != nil && !c.sess.isEnded() {
			s := c.sess
			c.mu.Unlock()
			return s, nil
		}
		if op := c.opening; op != nil {
			c.mu.Unlock()
			select {
			case <-op.done:
			case <-ctx.Done():
				return nil, connectionError("open a session on any of the coordinators", ctx.Err())
			}
			if op.err != nil && !op.again {
				return nil, op.err
			}
			continue // opened (or given up by its caller): look again
		}
		return c.open(ctx)
	}
}

// open opens a new session as the open in progress; call with c.mu held (it is released).
func (c *Client) open(ctx context.Context) (*session, error) {
	openCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	op := &openCall{done: make(chan struct{}), cancel: cancel}
	c.opening = op
	old := c.sess
	c.sess = nil
	c.mu.Unlock()
	if old != nil {
		old.stop() // its goroutines are gone or going: wait for them
	}
	s, address, err := openSession(openCtx, c)
	c.mu.Lock()
	c.opening = nil
	closed := c.closed
	if err == nil && !closed {
		c.sess = s
	}
	c.mu.Unlock()
	if closed {
		// Close ran meanwhile and cancelled openCtx: a session opened all the same is nobody's. It
		// is stopped before done closes, so Close returns with its goroutines gone.
		if err == nil {
			_ = s.close(openCtx)
		}
		err = errClientClosed()
	}
	op.err, op.again = err, err != nil && openCtx.Err() != nil
	close(op.done)
	if err != nil {
		return nil, err
	}
	// Reported outside c.mu, so OnEvent may call the client.
	c.emit(Event{Kind: EventConnected, SessionID: s.id, Address: address})
	return s, nil
}

func errClientClosed() *Error {
	return &Error{Reason: ReasonSessionEnded, Message: "client closed"}
}

// SessionID is the id of the current session ("" before the first acquire or after Close).
func (c *Client) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil || c.sess.isEnded() {
		return ""
	}
	return c.sess.id
}

// Close ends the session — every lock's Done is closed first, then the coordinator releases
// everything — waits (bounded by ctx) for the stream to end, and stops every goroutine the
// client started. An open another call has in progress is cancelled (that call fails with Reason
// session-ended) and waited for, bounded by ctx. Calling it again does nothing.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	s := c.sess
	op := c.opening
	if op != nil {
		op.cancel() // an open in progress ends at once: its session would be nobody's
	}
	c.mu.Unlock()
	var err error
	if op != nil {
		select {
		case <-op.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if s != nil {
		err = s.close(ctx)
	}
	c.stopRoot()
	c.workers.Wait()
	c.closeConns()
	return err
}

func (c *Client) closeConns() {
	for _, conn := range c.conns {
		_ = conn.Close()
	}
}

// newOwner is a fresh owner, unique per acquire within the client's sessions, so nothing
// re-enters by accident.
func (c *Client) newOwner() string {
	return "go-" + strconv.FormatUint(c.owners.Add(1), 10)
}

// emit reports a session event to Options.OnEvent.
func (c *Client) emit(e Event) {
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(e)
	}
}
