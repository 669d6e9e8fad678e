package app

import (
	"context"
	"errors"
	"time"

	"holdco/providers/devoidc"
	"holdco/store"
)

// devAttemptRows counts the development sign-in's password attempts in
// the store's attempt counters, so every replica counts the same.
type devAttemptRows struct{ st *store.Store }

var _ devoidc.AttemptRows = devAttemptRows{}

func storeWindow(w devoidc.Window) store.AttemptWindow {
	return store.AttemptWindow{Name: w.Name, Every: w.Every, Limit: w.Limit}
}

func (r devAttemptRows) Count(ctx context.Context, key string, at time.Time, w devoidc.Window) (time.Duration, bool, error) {
	wait, err := r.st.Identity().CountAttempt(ctx, key, at, storeWindow(w))
	if errors.Is(err, store.ErrRateLimited) {
		return wait, true, nil
	}
	return wait, false, err
}

func (r devAttemptRows) Full(ctx context.Context, key string, at time.Time, w devoidc.Window) (time.Duration, bool, error) {
	return r.st.Identity().AttemptsFull(ctx, key, at, storeWindow(w))
}
