package oauth

import (
	"context"
	"errors"
	"time"

	"holdco/store"
)

// Limits are the authorization server's rate limits (requests per minute
// and burst), each a token bucket per key (a client address or a client
// id) counted once for the cluster: every replica takes from the same
// bucket in the database. They are generous enough that a legitimate flow
// (one registration, a few authorizations, one token request) never meets
// them, tight enough to slow a flood.
type Limits struct {
	RegisterPerAddr, AuthorizePerAddr, AuthorizePerClient, TokenPerAddr, TokenPerClient Rate
}

// Rate is a refill rate and a burst.
type Rate struct{ PerMinute, Burst int }

// DefaultLimits are generous for legitimate clients (a hosted assistant
// sends every user's token request from a few addresses).
var DefaultLimits = Limits{
	RegisterPerAddr:    Rate{30, 30},
	AuthorizePerAddr:   Rate{120, 60},
	AuthorizePerClient: Rate{6000, 2000},
	TokenPerAddr:       Rate{600, 300},
	TokenPerClient:     Rate{6000, 2000},
}

// Names of the limits' buckets.
const (
	LimitRegisterPerAddr    = "oauth_register/addr"
	LimitAuthorizePerAddr   = "oauth_authorize/addr"
	LimitAuthorizePerClient = "oauth_authorize/client"
	LimitTokenPerAddr       = "oauth_token/addr"
	LimitTokenPerClient     = "oauth_token/client"
)

// Throttle takes one request of key from the bucket of the limit name at
// rate r. When the bucket is empty it answers how long until a request
// fits (the adapter's 429 with Retry-After); 0 admits the request.
func (s *Service) Throttle(ctx context.Context, name string, r Rate, key string) (retryAfter time.Duration, err error) {
	wait, err := s.store.TakeToken(ctx, store.TokenBucket{Name: name, PerMinute: float64(r.PerMinute), Burst: float64(r.Burst)}, key, s.now())
	if errors.Is(err, store.ErrRateLimited) {
		return max(wait, time.Second), nil
	}
	return 0, err
}
