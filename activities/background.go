package activities

import (
	"context"

	"go.temporal.io/sdk/interceptor"

	"holdco/store"
)

// BackgroundWrites is the worker interceptor that runs every activity
// (local ones too) with store.Background: a workflow's writes wait behind
// requests' writes for SQLite's write gate, so a user's request does not
// queue behind the bookkeeping of every workflow under way. holdco's
// worker and the tests' workers use it.
type BackgroundWrites struct {
	interceptor.WorkerInterceptorBase
}

// InterceptActivity implements interceptor.WorkerInterceptor.
func (*BackgroundWrites) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &backgroundActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type backgroundActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (b *backgroundActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	return b.Next.ExecuteActivity(store.Background(ctx), in)
}
