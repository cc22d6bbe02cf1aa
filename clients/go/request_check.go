package turnstile

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// maxRequestBytes is Options.MaxRequestBytes, or its default.
func (c *Client) maxRequestBytes() int {
	if c.opts.MaxRequestBytes > 0 {
		return c.opts.MaxRequestBytes
	}
	return DefaultMaxRequestBytes
}

// checkRequest is nil for a request the session may send, else the invalid-argument error of the
// call that made it: one that cannot be encoded (grpc-go would fail the whole stream locally) or
// whose encoded size is over MaxRequestBytes (the coordinator would end the stream
// RESOURCE_EXHAUSTED). Either way the session would end, and every lock of it with it. kind names
// the request (acquire, acquire_all, release, proclaim, transfer, request_release).
func (c *Client) checkRequest(kind, name string, req *pb.SessionRequest) *Error {
	// One encoding answers both: whether it can be encoded (strings must be UTF-8) and its size.
	encoded, err := proto.Marshal(req)
	if err != nil {
		return &Error{
			Reason: ReasonInvalidArgument, Name: name, Err: err,
			Message: fmt.Sprintf("%s request: cannot be encoded (%v); nothing was sent", kind, err),
		}
	}
	if n, limit := len(encoded), c.maxRequestBytes(); n > limit {
		return oversized(kind, name, n, limit)
	}
	return nil
}

func oversized(kind, name string, n, limit int) *Error {
	return &Error{
		Reason: ReasonInvalidArgument, Name: name,
		Message: fmt.Sprintf("%s request: %d bytes, over the %d-byte maximum a coordinator reads "+
			"(serve --max-message-bytes; client option MaxRequestBytes); nothing was sent", kind, n, limit),
	}
}
