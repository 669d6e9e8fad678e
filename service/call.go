package service

import (
	"context"

	"github.com/google/uuid"
)

// Call names the agent's tool call an act is made for: the run (turn) it
// belongs to and the call's idempotency key, "<turn>/tool/<step>/<index>".
// A use case with a side effect stores the effect under an id derived
// from the key (EffectID) in the same transaction as the effect, so the
// same call made again after a crash — its result was not recorded yet —
// finds the effect instead of repeating it; a billable act is charged
// under the same key (billing.PayFor).
type Call struct {
	RunID string
	Key   string
}

type callKey struct{}

// WithCall returns ctx carrying the tool call c.
func WithCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallOf returns the tool call ctx carries (ok false: a request of its
// own, e.g. REST).
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
