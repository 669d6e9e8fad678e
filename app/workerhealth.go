package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"

	"holdco/api"
	"holdco/models"
	"holdco/workflows/contract"
)

// pollerFreshness is how recently Temporal must have seen this worker
// poll for it to be ready (a long poll lasts about a minute).
const pollerFreshness = 2 * time.Minute

// newWorkerIdentity names this process's worker to Temporal, uniquely, so
// readiness can find its pollers.
func newWorkerIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s@%s", os.Getpid(), host, uuid.NewString()[:8])
}

// workerHealthHandler answers the worker role's probes on
// HOLDCO_WORKER_HEALTH_ADDR: GET /health while the process runs, GET
// /ready when the database and Temporal answer and Temporal has seen this
// worker poll the task queue.
func (a *App) workerHealthHandler(context.Context, string, string) (http.Handler, error) {
	ready := api.HealthHandler(append(a.healthChecks(true), api.HealthCheck{Name: "worker", Check: a.workerPolling}),
		a.logger.With("role", string(RoleWorker)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": string(models.CodeMethodNotAllowed), "detail": "Probes answer GET."})
		case r.URL.Path == "/health":
			live(w)
		case r.URL.Path == "/ready":
			ready.ServeHTTP(w, r)
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"error": string(models.CodeNotFound), "detail": "No route matches " + r.Method + " " + r.URL.Path + "."})
		}
	}), nil
}

// workerPolling asks Temporal whether this worker polls the task queue
// (workflow and activity tasks).
func (a *App) workerPolling(ctx context.Context) error {
	if a.worker == nil || a.Temporal == nil {
		return errors.New("the worker is not running")
	}
	for _, tq := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		resp, err := a.Temporal.DescribeTaskQueue(ctx, contract.TaskQueue, tq)
		if err != nil {
			return err
		}
		found := false
		for _, p := range resp.GetPollers() {
			if p.GetIdentity() == a.workerIdentity && time.Since(p.GetLastAccessTime().AsTime()) < pollerFreshness {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("no poll of %s (%s tasks) by this worker seen lately", contract.TaskQueue, tq)
		}
	}
	return nil
}
