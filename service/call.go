package service

import (
	"context"

	"github.com/google/uuid"

	"holdco/models"
)

// Call names the call an act is made for: an agent's tool call (the run
// (turn) it belongs to and the call's idempotency key,
// "<turn>/tool/<step>/<index>"), or a client's request that carries an
// idempotency key (RequestCall; no run).
// A use case with a side effect stores the effect under an id derived
// from the key (EffectID) in the same transaction as the effect, so the
// same call made again after a crash — its result was not recorded yet —
// finds the effect instead of repeating it; a billable act is charged
// under the same key (billing.PayForAct).
type Call struct {
	RunID string
	Key   string
}

type callKey struct{}

// WithCall returns ctx carrying the tool call c.
func WithCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallOf returns the call ctx carries (ok false: a request without an
// idempotency key, each one an act of its own).
func CallOf(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok && c.Key != ""
}

// effectNamespace derives effect ids from call keys.
var effectNamespace = uuid.MustParse("6f0f9a52-3b0e-4c1a-8d0c-2a7e64c5e9d1")

// EffectID is the id of the row an act of kind (e.g. "task", "email")
// stores: derived from the tool call's key when ctx carries one (the same
// call gets the same id), else a new random id.
func EffectID(ctx context.Context, kind string) string {
	if c, ok := CallOf(ctx); ok {
		return uuid.NewSHA1(effectNamespace, []byte(kind+"\x00"+c.Key)).String()
	}
	return uuid.NewString()
}

// Keyed reports whether ctx carries a tool call's key.
func Keyed(ctx context.Context) bool {
	_, ok := CallOf(ctx)
	return ok
}

// MaxIdempotencyKeyLength bounds a client's idempotency key (REST's
// Idempotency-Key header, the connector's idempotency_key argument).
const MaxIdempotencyKeyLength = 255

// RequestCall is the call of a client that names its act with an
// idempotency key (REST's Idempotency-Key header, the connector's
// idempotency_key argument): the same key sent again for the same act of
// the same company is the same call, so its effect is found instead of
// repeated and a billable act is paid once. The key is scoped by the
// company and the act, so no client can reach another's effects by
// choosing a key. field names the argument in the error of a bad key:
// 1 to 255 printable ASCII characters without spaces.
func RequestCall(companyID, act, key, field string) (Call, error) {
	if key == "" || len(key) > MaxIdempotencyKeyLength {
		return Call{}, models.Errorf(models.CodeInvalidArgument, "%s must be 1 to %d characters.", field, MaxIdempotencyKeyLength).WithField(field)
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] > '~' {
			return Call{}, models.Errorf(models.CodeInvalidArgument, "%s must be printable ASCII without spaces (a UUID is a good key).", field).WithField(field)
		}
	}
	return Call{Key: "request/" + companyID + "/" + act + "/" + key}, nil
}
