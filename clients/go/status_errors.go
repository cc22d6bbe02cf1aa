package turnstile

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// statusReasons maps the gRPC statuses a call or stream can end with onto the closed reason
// set; the rest (UNAVAILABLE, UNAUTHENTICATED, ...) are connection failures.
var statusReasons = map[codes.Code]Reason{
	codes.InvalidArgument:   ReasonInvalidArgument,
	codes.PermissionDenied:  ReasonPermissionDenied,
	codes.ResourceExhausted: ReasonLimit,
	codes.Internal:          ReasonInternal,
	codes.Canceled:          ReasonCancelled,
	codes.DeadlineExceeded:  ReasonCancelled,
}

// connectionError is the error of a session that could not be opened: a refused open keeps the
// server's reason (a TTL out of bounds is invalid-argument), ctx's end is cancelled, anything
// else is connection.
func connectionError(what string, err error) *Error {
	if err == nil {
		return &Error{Reason: ReasonConnection, Message: what}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Reason: ReasonCancelled, Message: what + ": " + err.Error(), Err: err}
	}
	st, _ := status.FromError(err)
	reason, ok := statusReasons[st.Code()]
	if !ok || reason == ReasonCancelled {
		reason = ReasonConnection
	}
	return &Error{Reason: reason, Message: what + ": " + st.Code().String() + ": " + st.Message(), Err: err}
}

// sessionEndedError is the error of requests pending when a session's stream ended for good.
func sessionEndedError(what string, err error) *Error {
	st, _ := status.FromError(err)
	message := what + ": " + st.Code().String() + ": " + st.Message()
	if refusedRequest(err) {
		message += " (a request the stream could not carry; set the client option MaxRequestBytes to the coordinators' --max-message-bytes)"
	}
	return &Error{Reason: ReasonSessionEnded, Message: message, Err: err}
}

// refusedRequest reports whether a stream ended because of a request sent on it, not because the
// connection was lost: the coordinator refused to read a message over its --max-message-bytes
// (RESOURCE_EXHAUSTED "larger than max"; grpc-go says the same of a reply over its own limit), or
// grpc-go could not encode one (INTERNAL "error while marshaling"). Asking again on a new session
// would end that one the same way.
func refusedRequest(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	switch st.Code() {
	case codes.ResourceExhausted:
		return strings.Contains(strings.ToLower(st.Message()), "larger than max")
	case codes.Internal:
		return strings.Contains(st.Message(), "marshal")
	}
	return false
}
