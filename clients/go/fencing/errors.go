package fencing

import "fmt"

// Refusal says why a proof or a guarded write was refused: a closed set.
type Refusal string

const (
	// Malformed: not a compact JWS with EdDSA, a kid and the claims of a Turnstile proof.
	Malformed Refusal = "malformed"
	// BadSignature: the signature does not verify with the key its kid names.
	BadSignature Refusal = "bad-signature"
	// UnknownKID: no published key has the proof's kid (after refreshing fetched keys).
	UnknownKID Refusal = "unknown-kid"
	// WrongLock: a valid proof, for another lock name than the resource's.
	WrongLock Refusal = "wrong-lock"
	// WrongIssuer: a valid proof, from another issuer than the one expected.
	WrongIssuer Refusal = "wrong-issuer"
	// Stale: a valid proof whose fence is lower than the highest the resource has seen.
	Stale Refusal = "stale"
)

// Error is a refused proof or guarded write; Refusal says why.
type Error struct {
	Refusal Refusal
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("fencing proof refused (%s): %s", e.Refusal, e.Message)
}

func refuse(r Refusal, format string, args ...any) *Error {
	return &Error{Refusal: r, Message: fmt.Sprintf(format, args...)}
}
