package turnstile

import "context"

// ownerKey is the context key of one client's unit-of-work owner: per client, so a scope of one
// client never hands its owner to another's acquires (whose fresh owners could collide with it).
type ownerKey struct{ c *Client }

// WithOwner returns a context that makes one unit of work of everything done with it (and with the
// contexts derived from it): an acquire of c with no AcquireOptions.Owner takes owner, so its locks
// are one (session, owner) — re-entry and deadlock detection see them together (docs/deadlocks.md,
// "Owners that follow the work"). An empty owner is a fresh one. WithLock and WithLocks already hand
// their fn a context scoped to the held lock's owner. Options.OwnerPerAcquire turns scopes off.
func (c *Client) WithOwner(ctx context.Context, owner string) context.Context {
	if owner == "" {
		owner = c.newOwner()
	}
	return context.WithValue(ctx, ownerKey{c}, owner)
}

// ownerFor is the owner of an acquire: opts.Owner, else the owner of ctx's unit of work (unless
// Options.OwnerPerAcquire), else a fresh one.
func (c *Client) ownerFor(ctx context.Context, opts *AcquireOptions) string {
	if opts.Owner != "" {
		return opts.Owner
	}
	if !c.opts.OwnerPerAcquire {
		if owner, ok := ctx.Value(ownerKey{c}).(string); ok {
			return owner
		}
	}
	return c.newOwner()
}
