package turnstile

import (
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// The request of an acquireAttempt is an Acquire or an AcquireAll set; these read and write it
// whichever it is, so sending, withdrawing and resuming treat both alike.

func (a *acquireAttempt) requestID() string {
	if a.set != nil {
		return a.set.RequestId
	}
	return a.request.RequestId
}

func (a *acquireAttempt) setRequestID(id string) {
	if a.set != nil {
		a.set.RequestId = id
	} else {
		a.request.RequestId = id
	}
}

func (a *acquireAttempt) setWait(wait *durationpb.Duration) {
	if a.set != nil {
		a.set.Wait = wait
	} else {
		a.request.Wait = wait
	}
}

// name is the lock an error of the attempt names: a set's concerns several, so none.
func (a *acquireAttempt) name() string {
	if a.set != nil {
		return ""
	}
	return a.request.Name
}

// kind is what the attempt is called in error messages; field is its message's field name.
func (a *acquireAttempt) kind() string {
	if a.set != nil {
		return "acquire of the set"
	}
	return "acquire"
}

func (a *acquireAttempt) field() string {
	if a.set != nil {
		return "acquire_all"
	}
	return "acquire"
}

// message is the attempt's request as a SessionRequest.
func (a *acquireAttempt) message() *pb.SessionRequest {
	if a.set != nil {
		return &pb.SessionRequest{Kind: &pb.SessionRequest_AcquireAll{AcquireAll: a.set}}
	}
	return &pb.SessionRequest{Kind: &pb.SessionRequest_Acquire{Acquire: a.request}}
}

// withWait is a copy of the attempt's request message with its wait replaced.
func (a *acquireAttempt) withWait(wait *durationpb.Duration) *pb.SessionRequest {
	if a.set != nil {
		set := proto.Clone(a.set).(*pb.AcquireAll)
		set.Wait = wait
		return &pb.SessionRequest{Kind: &pb.SessionRequest_AcquireAll{AcquireAll: set}}
	}
	req := proto.Clone(a.request).(*pb.Acquire)
	req.Wait = wait
	return &pb.SessionRequest{Kind: &pb.SessionRequest_Acquire{Acquire: req}}
}

// remaining is the acquire to send again on resume: the same request_id, with what is left of a
// finite wait (0, a try-once, when it ran out). Call with the session's mu held.
func (a *acquireAttempt) remaining() *pb.SessionRequest {
	if a.waitUntil.IsZero() {
		return a.message()
	}
	return a.withWait(durationpb.New(max(0, time.Until(a.waitUntil))))
}

// withdrawal is what a resume sends for an acquire given up on: the same request_id as a
// try-once, then its cancel, so a grant made meanwhile is found (and released when it arrives).
func (a *acquireAttempt) withdrawal() []*pb.SessionRequest {
	return []*pb.SessionRequest{a.withWait(durationpb.New(0)), cancelRequest(a.requestID())}
}
