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

	mu     sync.Mutex // guards sess and closed; held while a session opens
	sess   *session
	closed bool
	owners atomic.Uint64
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
// last one ended.
func (c *Client) session(ctx context.Context) (*session, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, &Error{Reason: ReasonSessionEnded, Message: "client closed"}
	}
	if c.sess != nil && !c.sess.isEnded() {
		defer c.mu.Unlock()
		return c.sess, nil
	}
	if c.sess != nil {
		c.sess.stop() // its goroutines are gone or going: wait for them
	}
	s, address, err := openSession(ctx, c)
	if err == nil {
		c.sess = s
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// Reported outside c.mu, so OnEvent may call the client.
	c.emit(Event{Kind: EventConnected, SessionID: s.id, Address: address})
	return s, nil
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
// client started. Calling it again does nothing.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	s := c.sess
	c.mu.Unlock()
	var err error
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
