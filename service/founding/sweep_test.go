package founding_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"holdco/models"
	"holdco/service"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// TestInterviewStartLostToACrashIsSwept opens an interview whose workflow
// start fails after the row's commit: the answer is the interview all the
// same, and the worker's sweeper starts its workflow once.
func TestInterviewStartLostToACrashIsSwept(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil)
	e := servicetest.NewWith(t, usecases.Options{Temporal: testenv.UnreachableTemporal{Client: tmp.Client}})
	ada, _ := e.User(t, "ada@example.com")
	iv, err := e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "Guided hiking maps for families"})
	require.NoError(t, err)
	assert.Equal(t, models.FoundingNaming, iv.State)
	assert.Nil(t, iv.WorkflowStartedAt)
	_, err = e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "A second idea for later"})
	assert.Equal(t, models.CodeConflict, codeOf(t, err), "one open interview per user")

	sw := &founding.Sweeper{Store: e.Store, Temporal: tmp.Client, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n, err := sw.Sweep(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	p, _ := service.PrincipalFrom(ada)
	d, err := tmp.Client.DescribeWorkflowExecution(context.Background(), contract.FoundingWorkflowID(p.UserID), "")
	require.NoError(t, err)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus())
	cur, err := e.Svc.Founding.CurrentFounding(ada)
	require.NoError(t, err)
	assert.NotNil(t, cur.WorkflowStartedAt)
	n, err = sw.Sweep(context.Background(), 0)
	require.NoError(t, err)
	assert.Zero(t, n, "started once")

	// The start happened but its mark was lost: the running workflow names
	// this interview, so the sweep only marks it.
	_, err = e.SQL.Exec("UPDATE founding_interviews SET workflow_started_at = NULL")
	require.NoError(t, err)
	n, err = sw.Sweep(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	cur, err = e.Svc.Founding.CurrentFounding(ada)
	require.NoError(t, err)
	assert.NotNil(t, cur.WorkflowStartedAt)
}
