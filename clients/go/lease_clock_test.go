package turnstile

import (
	"testing"
	"time"
)

// The lease arithmetic alone (no coordinator): deadlines count from send times, never from
// answers, and only an acknowledged keepalive moves them.
func TestLeaseClockCountsFromSendTimes(t *testing.T) {
	c := newLeaseClock(10 * time.Second)
	if c.margin() != time.Second {
		t.Fatalf("margin of a 10 s TTL: %s, want 1 s (ttl/10)", c.margin())
	}
	if m := newLeaseClock(time.Minute).margin(); m != 2*time.Second {
		t.Fatalf("margin of a 1 min TTL: %s, want 2 s (the cap)", m)
	}
	opened := time.Now()
	c.confirm(opened)
	acquired := opened.Add(time.Second)
	if got, want := c.deadline(acquired), acquired.Add(9*time.Second); !got.Equal(want) {
		t.Fatalf("deadline before any ack: %v, want acquire sent + ttl − margin = %v", got, want)
	}
	c.sent(1)
	first := c.keepAliveSent[1]
	c.sent(2)
	c.acked(2) // acks can skip seqs: 2 confirms everything up to its send time
	if len(c.keepAliveSent) != 0 {
		t.Fatalf("acked seq 2 left %d send times behind", len(c.keepAliveSent))
	}
	if c.lastConfirmed.Before(first) {
		t.Fatal("the ack of seq 2 confirmed less than seq 1's send time")
	}
	c.acked(1) // a late or unknown ack changes nothing
	if got := c.deadline(opened); !got.Equal(c.lastConfirmed.Add(9 * time.Second)) {
		t.Fatalf("deadline after an ack: %v, want confirmed + ttl − margin", got)
	}
	if got := c.sessionEnd(); !got.Equal(c.lastConfirmed.Add(10 * time.Second)) {
		t.Fatalf("session end %v, want confirmed + ttl", got)
	}
}
