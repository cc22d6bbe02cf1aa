package turnstile

import (
	"bytes"
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// The backoff between failed watches of Observe (the shared constants: test/conformance/constants.json).
const (
	firstWatchBackoff = 100 * time.Millisecond
	maxWatchBackoff   = 2 * time.Second
)

// Observe streams the election's leader: the leader now, then every change — a new leader, a new
// value, or nil when nobody leads. It watches again (on the next address, with backoff) when a
// stream breaks; leaders that came and went meanwhile are skipped, never invented. The channel is
// closed when ctx is done, the client is closed, or the coordinator refuses the watch for good
// (a bad name, no permission).
func (e *Election) Observe(ctx context.Context) <-chan *Leader {
	out := make(chan *Leader)
	ctx, cancel := context.WithCancel(ctx)
	stopOnClose := context.AfterFunc(e.client.root, cancel)
	e.client.workers.Add(1)
	go func() {
		defer e.client.workers.Done()
		defer close(out)
		defer stopOnClose()
		defer cancel()
		e.observe(ctx, out)
	}()
	return out
}

// observe runs Watch streams until ctx is done, sending each leader change on out.
func (e *Election) observe(ctx context.Context, out chan<- *Leader) {
	var last *Leader
	sent := false
	backoff := firstWatchBackoff
	for address := 0; ; address = (address + 1) % len(e.client.stubs) {
		stream, err := e.client.stubs[address].Watch(ctx, &pb.WatchRequest{Name: e.name})
		holders := map[holdKey]*pb.Holder{}
		for err == nil {
			var msg *pb.WatchResponse
			if msg, err = stream.Recv(); err != nil {
				break
			}
			backoff = firstWatchBackoff
			applyWatch(holders, msg)
			leader := leaderOf(holderList(holders))
			if sent && sameLeader(last, leader) {
				continue
			}
			select {
			case out <- leader:
				last, sent = leader, true
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil || permanent(err) {
			return
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		backoff = min(backoff*2, maxWatchBackoff)
	}
}

// applyWatch applies a snapshot (which replaces everything) or one holder change.
func applyWatch(holders map[holdKey]*pb.Holder, msg *pb.WatchResponse) {
	if snapshot := msg.GetSnapshot(); snapshot != nil {
		clear(holders)
		for _, h := range snapshot.GetHolders() {
			holders[holdKey{h.GetSessionId(), h.GetOwner()}] = h
		}
		return
	}
	event := msg.GetEvent()
	h := event.GetHolder()
	key := holdKey{h.GetSessionId(), h.GetOwner()}
	switch event.GetChange() {
	case pb.HolderChange_HOLDER_CHANGE_TRANSFERRED:
		// One change, old → new: never a moment without a leader.
		from := event.GetFrom()
		delete(holders, holdKey{from.GetSessionId(), from.GetOwner()})
		holders[key] = h
	case pb.HolderChange_HOLDER_CHANGE_ACQUIRED, pb.HolderChange_HOLDER_CHANGE_VALUE:
		holders[key] = h
	case pb.HolderChange_HOLDER_CHANGE_RELEASED, pb.HolderChange_HOLDER_CHANGE_EXPIRED, pb.HolderChange_HOLDER_CHANGE_REVOKED:
		delete(holders, key)
	}
}

func holderList(holders map[holdKey]*pb.Holder) []*pb.Holder {
	list := make([]*pb.Holder, 0, len(holders))
	for _, h := range holders {
		list = append(list, h)
	}
	return list
}

func sameLeader(a, b *Leader) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SessionID == b.SessionID && a.Owner == b.Owner && a.Token == b.Token && bytes.Equal(a.Value, b.Value)
}

// permanent reports a watch the coordinator will refuse again wherever it is asked.
func permanent(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.PermissionDenied, codes.Unimplemented, codes.Unauthenticated:
		return true
	}
	return false
}
