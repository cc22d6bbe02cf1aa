package fencing

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"regexp"
	"strconv"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Claims are what a verified proof says (docs/fencing.md).
type Claims struct {
	Lock  string
	Fence uint64
	// Caller is the holder's identity from mTLS or a bearer token ("" without security).
	Caller   string
	Client   string
	Session  string
	Owner    string
	IssuedAt time.Time
	Issuer   string
	// KeyID is the kid of the key that signed it.
	KeyID string
}

// VerifyOptions say what Verify checks beyond the signature.
type VerifyOptions struct {
	// Lock the resource belongs to: a proof for another name is refused (WrongLock). Empty: any.
	Lock string
	// Issuer expected (a coordinator's --fencing-issuer). Empty: any.
	Issuer string
}

var decimalFence = regexp.MustCompile(`^[1-9][0-9]{0,19}$`)

type wireClaims struct {
	Iss     *string  `json:"iss"`
	Iat     *float64 `json:"iat"`
	Lock    *string  `json:"lock"`
	Fence   *string  `json:"fence"`
	Caller  *string  `json:"caller"`
	Client  *string  `json:"client"`
	Session *string  `json:"session"`
	Owner   *string  `json:"owner"`
}

// Verify checks a fencing proof (compact JWS, EdDSA, Ed25519, kid) against keys and returns its
// claims, or an *Error naming why it is refused: Malformed, BadSignature, UnknownKID, WrongLock,
// WrongIssuer. A fetching KeySource is asked again once when the kid is unknown.
func Verify(ctx context.Context, proof string, keys KeySource, opts VerifyOptions) (*Claims, error) {
	jws, err := jose.ParseSigned(proof, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return nil, refuse(Malformed, "%v", err)
	}
	if len(jws.Signatures) != 1 || jws.Signatures[0].Protected.KeyID == "" {
		return nil, refuse(Malformed, "no kid in the header")
	}
	kid := jws.Signatures[0].Protected.KeyID
	key, err := keyFor(ctx, kid, keys)
	if err != nil {
		return nil, err
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, refuse(BadSignature, "the signature does not verify with key %q", kid)
	}
	var w wireClaims
	if err := json.Unmarshal(payload, &w); err != nil {
		return nil, refuse(Malformed, "claims are not JSON: %v", err)
	}
	for name, v := range map[string]*string{"iss": w.Iss, "lock": w.Lock, "fence": w.Fence, "caller": w.Caller, "client": w.Client, "session": w.Session, "owner": w.Owner} {
		if v == nil {
			return nil, refuse(Malformed, "claim %q is not a string", name)
		}
	}
	if w.Iat == nil {
		return nil, refuse(Malformed, `claim "iat" is not a number`)
	}
	fence, err := strconv.ParseUint(*w.Fence, 10, 64)
	if !decimalFence.MatchString(*w.Fence) || err != nil {
		return nil, refuse(Malformed, `claim "fence" is not a decimal token from 1 to 2^64-1: %q`, *w.Fence)
	}
	c := &Claims{
		Lock: *w.Lock, Fence: fence, Caller: *w.Caller, Client: *w.Client, Session: *w.Session, Owner: *w.Owner,
		IssuedAt: time.Unix(int64(*w.Iat), 0), Issuer: *w.Iss, KeyID: kid,
	}
	if opts.Issuer != "" && c.Issuer != opts.Issuer {
		return nil, refuse(WrongIssuer, "issued by %q, expected %q", c.Issuer, opts.Issuer)
	}
	if opts.Lock != "" && c.Lock != opts.Lock {
		return nil, refuse(WrongLock, "a proof for lock %q, not %q", c.Lock, opts.Lock)
	}
	return c, nil
}

func keyFor(ctx context.Context, kid string, keys KeySource) (ed25519.PublicKey, error) {
	for _, refresh := range []bool{false, true} {
		set, err := keys.Keys(ctx, refresh)
		if err != nil {
			return nil, err
		}
		for _, k := range set.Key(kid) {
			if pub, ok := k.Key.(ed25519.PublicKey); ok {
				return pub, nil
			}
		}
	}
	return nil, refuse(UnknownKID, "no published Ed25519 key has kid %q", kid)
}
