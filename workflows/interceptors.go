package workflows

import (
	"context"

	"go.temporal.io/sdk/interceptor"

	"holdco/activities"
)

// WorkerInterceptors are the interceptors of every holdco worker (the
// app's and the tests'): each activity, local ones too, runs with
// activities.BackgroundWrites, so a request's database writes go before
// a workflow's.
func WorkerInterceptors() []interceptor.WorkerInterceptor {
	return []interceptor.WorkerInterceptor{&backgroundWrites{}}
}

type backgroundWrites struct {
	interceptor.WorkerInterceptorBase
}

func (*backgroundWrites) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &backgroundActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type backgroundActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (b *backgroundActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	return b.Next.ExecuteActivity(activities.BackgroundWrites(ctx), in)
}
