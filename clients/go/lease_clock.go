package turnstile

import "time"

// leaseClock is the told-first lease arithmetic of one session (docs/protocol.md, "Keepalive and
// judging the lease"). Every time.Time here comes from time.Now(), so comparisons use Go's
// monotonic clock and a wall-clock jump cannot stretch a lease. Not safe for concurrent use: the
// session guards it with its mutex.
type leaseClock struct {
	ttl time.Duration
	// Send time of the newest renewal the server confirmed (an acked keepalive, or an answered open).
	lastConfirmed time.Time
	// Send times of keepalives not yet acknowledged, by seq.
	keepAliveSent map[uint64]time.Time
}

func newLeaseClock(ttl time.Duration) *leaseClock {
	return &leaseClock{ttl: ttl, keepAliveSent: map[uint64]time.Time{}}
}

// margin absorbs clock-rate differences between client and store: min(2 s, ttl/10).
func (c *leaseClock) margin() time.Duration {
	return min(2*time.Second, c.ttl/10)
}

// sent records that keepalive seq is being sent now; called just before the write, so the lease
// is measured from no later than the real send.
func (c *leaseClock) sent(seq uint64) {
	c.keepAliveSent[seq] = time.Now()
}

// acked records the ack of keepalive seq: every lease of the session is confirmed up to that
// keepalive's send time + ttl. Acks never go backwards, so older unanswered seqs are dropped.
func (c *leaseClock) acked(seq uint64) {
	sentAt, ok := c.keepAliveSent[seq]
	if !ok {
		return
	}
	for pending := range c.keepAliveSent {
		if pending <= seq {
			delete(c.keepAliveSent, pending)
		}
	}
	c.confirm(sentAt)
}

// confirm records that the server renewed every lease of the session as of sentAt.
func (c *leaseClock) confirm(sentAt time.Time) {
	if sentAt.After(c.lastConfirmed) {
		c.lastConfirmed = sentAt
	}
}

// deadline is when a lock granted for an acquire sent at acquireSent must be treated as lost:
// max(acquire sent, newest confirmation) + ttl − margin.
func (c *leaseClock) deadline(acquireSent time.Time) time.Time {
	base := acquireSent
	if c.lastConfirmed.After(base) {
		base = c.lastConfirmed
	}
	return base.Add(c.ttl - c.margin())
}

// sessionEnd is when no coordinator can still hold the session: newest confirmation + ttl.
func (c *leaseClock) sessionEnd() time.Time {
	return c.lastConfirmed.Add(c.ttl)
}
