package turnstile

import (
	"context"

	pb "github.com/turnstile-locks/turnstile/clients/go/gen/turnstile/v1"
)

// FenceStatus is CheckFence's answer.
type FenceStatus string

const (
	// FenceCurrent: a live hold of the name has the token.
	FenceCurrent FenceStatus = "current"
	// FenceSuperseded: a live hold has a newer token (FenceCheck.NewerToken).
	FenceSuperseded FenceStatus = "superseded"
	// FenceUnknown: no live hold has the token or a newer one; act as if it were not current.
	FenceUnknown FenceStatus = "unknown"
)

// FenceCheck is whether a fencing token is still current, and the newer token when superseded.
type FenceCheck struct {
	Status     FenceStatus
	NewerToken uint64
}

// CheckFence asks whether token is still current for name (LockService.CheckFence, authorized as
// read), for a resource about to do something irreversible (docs/fencing.md). It asks the
// coordinators in turn.
func (c *Client) CheckFence(ctx context.Context, name string, token uint64) (FenceCheck, error) {
	var lastErr error
	for _, stub := range c.stubs {
		r, err := stub.CheckFence(ctx, &pb.CheckFenceRequest{Name: name, FencingToken: token})
		if err == nil {
			switch r.GetStatus() {
			case pb.FenceStatus_FENCE_STATUS_CURRENT:
				return FenceCheck{Status: FenceCurrent}, nil
			case pb.FenceStatus_FENCE_STATUS_SUPERSEDED:
				return FenceCheck{Status: FenceSuperseded, NewerToken: r.GetNewerFencingToken()}, nil
			default:
				return FenceCheck{Status: FenceUnknown}, nil
			}
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return FenceCheck{}, rpcError("check fence", name, lastErr)
}
