package api

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/service/traces"
)

// TraceFileResponse is one trace file of an agent run.
type TraceFileResponse struct {
	Name      string    `json:"name" doc:"trace.jsonl once the run has finished; before that (or after a crash) the parts the run's steps wrote, such as 000003-model.jsonl."`
	SizeBytes int64     `json:"size_bytes"`
	UpdatedAt time.Time `json:"updated_at"`
}

type traceHandlers struct{ svc *traces.Service }

func registerTraceRoutes(api huma.API, h *traceHandlers) {
	tags := []string{"admin"}
	huma.Register(api, huma.Operation{OperationID: "admin-list-run-trace-files", Method: http.MethodGet, Path: "/admin/runs/{run_id}/trace/list",
		Tags: tags, Summary: "List an agent run's trace files", Security: bearerSecurity, Metadata: map[string]any{adminOnly: true},
		Description: "The run's `.jsonl` files on blob storage (`runs/<run_id>/`), sorted by name. A run is one agent turn; `run_id` is the turn's id. " +
			"404 `not_found` when the run has no trace file (unknown run); 502 `upstream_unavailable` when blob storage is not configured. See docs/traces.md."}, h.list)
	huma.Register(api, huma.Operation{OperationID: "admin-get-run-trace", Method: http.MethodGet, Path: "/admin/runs/{run_id}/trace",
		Tags: tags, Summary: "Read an agent run's trace", Security: bearerSecurity, Metadata: map[string]any{adminOnly: true},
		Description: "The raw JSON Lines trace, streamed from blob storage: the run's `trace.jsonl`, else (a run still going, or one that stopped " +
			"before its trace was joined) the first `.jsonl` file of the run by name. One event per line: `time`, `type` (turn_started, model_request, " +
			"model_response, tool_call, tool_result, usage, error, turn_ended) and, by type, `step`, `tool`, `call_id`, `model`, `data`, `usage`, `error`. " +
			"Secrets are redacted and long strings cut before a trace is stored. 404 `not_found` when the run has no trace file.",
		Responses: map[string]*huma.Response{"200": {
			Description: "The trace, one JSON event per line",
			Content:     map[string]*huma.MediaType{traces.ContentType: {Schema: &huma.Schema{Type: "string"}}},
		}}}, h.get)
}

type runIDInput struct {
	RunID string `path:"run_id" format:"uuid" doc:"The run's id (the agent turn's id)."`
}

type traceFilesOutput struct{ Body []TraceFileResponse }

func (h *traceHandlers) list(ctx context.Context, in *runIDInput) (*traceFilesOutput, error) {
	list, err := h.svc.ListFiles(ctx, in.RunID)
	if err != nil {
		return nil, err
	}
	out := &traceFilesOutput{Body: make([]TraceFileResponse, 0, len(list))}
	for _, f := range list {
		out.Body = append(out.Body, TraceFileResponse{Name: f.Name, SizeBytes: f.SizeBytes, UpdatedAt: f.UpdatedAt})
	}
	return out, nil
}

type traceOutput struct {
	ContentType  string `header:"Content-Type" doc:"application/x-ndjson"`
	NoSniff      string `header:"X-Content-Type-Options" doc:"nosniff"`
	CacheControl string `header:"Cache-Control" doc:"no-store"`
	Body         func(huma.Context)
}

// get streams the trace; the blob is opened before the answer starts, so
// a missing trace is a clean 404. No Content-Length: a part read before
// the run finishes may be rewritten meanwhile by a retried step.
func (h *traceHandlers) get(ctx context.Context, in *runIDInput) (*traceOutput, error) {
	tr, err := h.svc.OpenTrace(ctx, in.RunID)
	if err != nil {
		return nil, err
	}
	return &traceOutput{ContentType: traces.ContentType, NoSniff: "nosniff", CacheControl: "no-store",
		Body: func(hc huma.Context) {
			defer tr.Body.Close()
			hc.SetStatus(http.StatusOK)
			if _, err := io.Copy(hc.BodyWriter(), tr.Body); err != nil {
				// The status is sent: the client sees a short body.
				errorLogger(hc).Warn("trace stream cut", "run_id", in.RunID, "error", err)
			}
		}}, nil
}
