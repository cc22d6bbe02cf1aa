package turnstile

import (
	"crypto/tls"
	"time"

	"google.golang.org/grpc"
)

// DefaultTTL is the session TTL asked for when Options.TTL is zero (the server's default too).
const DefaultTTL = 15 * time.Second

// DefaultMaxRequestBytes is the largest encoded request sent when Options.MaxRequestBytes is zero:
// the coordinator's default --max-message-bytes.
const DefaultMaxRequestBytes = 65536

// Options configure a Client. The zero value is a plaintext client with a 15 s session TTL.
type Options struct {
	// ClientName identifies the client in logs, Describe and blockers of a timed-out acquire.
	ClientName string
	// TTL is the requested session TTL (the server refuses one outside its bounds, default 1 s – 1 h).
	TTL time.Duration
	// TLS, when set, connects over TLS with this configuration: RootCAs verifies the coordinator,
	// Certificates is the client certificate for mTLS. LoadTLS builds one from PEM files.
	TLS *tls.Config
	// Token is a bearer token sent as "authorization: Bearer <token>" on every call; it needs TLS.
	Token string
	// OnEvent, when set, is called for every change of the session's state (connected,
	// reconnecting, resumed, expired). It runs on the session's goroutine: keep it short.
	OnEvent func(Event)
	// DialOptions are added to the client's own (credentials, keepalive) for every address.
	DialOptions []grpc.DialOption
	// OwnerPerAcquire turns off owners that follow the work: every acquire without
	// AcquireOptions.Owner gets a fresh owner, whatever its context (see Client.WithOwner).
	OwnerPerAcquire bool
	// MaxRequestBytes is the largest encoded request the client sends on its session; 0 means
	// DefaultMaxRequestBytes (65536, the coordinator's default --max-message-bytes). Set it to the
	// coordinators' --max-message-bytes. A request over it (a large AcquireOptions.Value or proclaimed
	// value, long names) or one that cannot be encoded (a string that is not valid UTF-8) fails that
	// call alone with ReasonInvalidArgument and is never sent: the coordinator would end the whole
	// session over it, and every lock of it with the session.
	MaxRequestBytes int
}

// AcquireOptions tune one acquire; nil means the defaults.
type AcquireOptions struct {
	// Wait bounds the wait on the coordinator: past it the acquire fails with ReasonTimeout and
	// Error.BlockedBy names the holders it waited behind. Zero: wait until ctx is done. Unanswered
	// Wait + 1 s after the call (a dead link, a stalled store) the client gives up on its own: a
	// timeout, and the request is withdrawn (cancel; a grant that still arrives is released).
	Wait time.Duration
	// Owner is the re-entry key: acquiring a name again with an owner that holds it returns the
	// same *Lock with its hold count raised (each Release drops one hold). Empty: the owner of the
	// ctx's unit of work (a WithLock/WithLocks fn's context, Client.WithOwner), else a fresh owner
	// per acquire, so separate goroutines exclude each other (docs/deadlocks.md).
	Owner string
	// Value is attached to the hold; Describe and Watch show it (at most 4096 bytes).
	Value []byte
	// OnQueued, when set, is called with the queue position when the acquire has to wait
	// (at most once, on the session's goroutine: keep it short).
	OnQueued func(position uint32)
	// lockDelay is set by WithLockDelay; nil: the coordinator's default for the name's prefix.
	lockDelay *time.Duration
	// Priority ranks the acquire in the queue, 0 to 100 (default 0): ahead of every waiter of lower
	// priority, FIFO within one; a holder is never pre-empted (docs/elections.md). Outside the range the
	// acquire fails with ReasonInvalidArgument naming acquire.priority.
	Priority int32
	// AskToYield, for Election.Campaign only: once the campaign is queued, the leader is asked to yield
	// with this reason (a release request; the leader decides). Empty: nobody is asked.
	AskToYield string
}

// WithLockDelay sets the hold's lock-delay (0 to 60 s; 0: none) and returns o, or new options when o is
// nil. If the hold ends without a Release (its lease runs out, the session is lost, an operator revokes
// it), nobody is granted the name until d has passed; a Release hands it on at once. Not set: the
// coordinator's default for the name's prefix (none unless configured). Over 60 s: the acquire fails
// with ReasonInvalidArgument naming acquire.lock_delay (acquire_all.lock_delay for AcquireAll, where
// it is every hold's of the set).
func (o *AcquireOptions) WithLockDelay(d time.Duration) *AcquireOptions {
	if o == nil {
		o = &AcquireOptions{}
	}
	o.lockDelay = &d
	return o
}

func (o *AcquireOptions) orDefault() *AcquireOptions {
	if o == nil {
		return &AcquireOptions{}
	}
	return o
}

// EventKind names a session state change.
type EventKind string

// The session state changes OnEvent reports (docs/sessions.md, "Client states").
const (
	// EventConnected: a new session was opened (SessionID).
	EventConnected EventKind = "connected"
	// EventReconnecting: the session's stream broke (Err); locks stay valid by their local lease.
	EventReconnecting EventKind = "reconnecting"
	// EventResumed: the session goes on on a new stream, Held locks kept.
	EventResumed EventKind = "resumed"
	// EventExpired: the session ended without Close (Err): its locks are lost.
	EventExpired EventKind = "expired"
)

// Event is one session state change.
type Event struct {
	Kind      EventKind
	SessionID string
	// Address is the coordinator the session is (re)connected to; "" for reconnecting/expired.
	Address string
	// Held is the number of locks a resume kept.
	Held int
	Err  error
}
