package activities

import (
	"context"

	"holdco/store"
)

// BackgroundWrites marks ctx's writes as background work
// (store.Background): on SQLite a workflow's writes wait behind requests'
// writes for the write gate, so a user's request does not queue behind
// the bookkeeping of every workflow under way. The worker's interceptor
// (workflows.WorkerInterceptors) runs every activity with it; it is here
// because workflow code does not import the store (internal/layering).
func BackgroundWrites(ctx context.Context) context.Context { return store.Background(ctx) }
