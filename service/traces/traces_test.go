package traces_test

import (
	"context"
	"io"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/traces"
)

var adminCtx = service.WithPrincipal(context.Background(), service.Principal{Credential: service.CredentialAdminToken, CredentialID: "ops"})

func readAll(t *testing.T, tr traces.Trace) string {
	t.Helper()
	defer tr.Body.Close()
	b, err := io.ReadAll(tr.Body)
	require.NoError(t, err)
	return string(b)
}

func TestOperatorReadsARunsTrace(t *testing.T) {
	blobs := newBlobs(t)
	w, svc := traces.NewWriter(blobs), traces.New(blobs)
	run := uuid.NewString()
	require.NoError(t, w.Append(context.Background(), run, "000001-model", traces.Event{Type: traces.EventModelRequest, Step: 1}))
	require.NoError(t, w.Append(context.Background(), run, "000000-start", traces.Event{Type: traces.EventTurnStarted}))

	// Before Finish: the parts, and the first of them is the trace.
	list, err := svc.ListFiles(adminCtx, run)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "000000-start.jsonl", list[0].Name)
	assert.Equal(t, "000001-model.jsonl", list[1].Name)
	assert.Positive(t, list[0].SizeBytes)
	assert.False(t, list[0].UpdatedAt.IsZero())
	tr, err := svc.OpenTrace(adminCtx, run)
	require.NoError(t, err)
	assert.Equal(t, "000000-start.jsonl", tr.Name)
	assert.Contains(t, readAll(t, tr), `"type":"turn_started"`)

	// After Finish: trace.jsonl, whatever else the folder holds.
	require.NoError(t, w.Finish(context.Background(), run))
	require.NoError(t, w.Append(context.Background(), run, "000000-late", traces.Event{Type: traces.EventError, Error: "late"}))
	list, err = svc.ListFiles(adminCtx, run)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, []string{"000000-late.jsonl", traces.TraceName}, []string{list[0].Name, list[1].Name})
	tr, err = svc.OpenTrace(adminCtx, run)
	require.NoError(t, err)
	assert.Equal(t, traces.TraceName, tr.Name)
	assert.Equal(t, list[1].SizeBytes, tr.SizeBytes)
	body := readAll(t, tr)
	assert.Regexp(t, `^\{"time":"[^"]+","type":"turn_started"\}\n\{"time":"[^"]+","type":"model_request","step":1\}\n$`, body)
}

func TestTraceAnswers(t *testing.T) {
	blobs := newBlobs(t)
	svc := traces.New(blobs)
	run := uuid.NewString()
	require.NoError(t, traces.NewWriter(blobs).Append(context.Background(), run, "000000-start", traces.Event{Type: traces.EventTurnStarted}))

	_, err := svc.ListFiles(adminCtx, uuid.NewString())
	assert.True(t, models.IsCode(err, models.CodeNotFound), "unknown run: %v", err)
	_, err = svc.OpenTrace(adminCtx, uuid.NewString())
	assert.True(t, models.IsCode(err, models.CodeNotFound), "unknown run: %v", err)
	_, err = svc.ListFiles(adminCtx, "not-a-uuid")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%v", err)

	_, err = svc.ListFiles(context.Background(), run)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "anonymous: %v", err)
	for _, p := range []service.Principal{
		{Credential: service.CredentialWebSession, UserID: uuid.NewString()},
		{Credential: service.CredentialCompanyKey, CompanyID: uuid.NewString()},
	} {
		ctx := service.WithPrincipal(context.Background(), p)
		_, err = svc.ListFiles(ctx, run)
		assert.True(t, models.IsCode(err, models.CodeForbidden), "%s: %v", p.Credential, err)
		_, err = svc.OpenTrace(ctx, run)
		assert.True(t, models.IsCode(err, models.CodeForbidden), "%s: %v", p.Credential, err)
	}

	_, err = traces.New(nil).ListFiles(adminCtx, run)
	assert.True(t, models.IsCode(err, models.CodeUpstreamUnavailable), "%v", err)
}
