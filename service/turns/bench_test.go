package turns_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"holdco/models"
	"holdco/providers/llm/scripted"
	"holdco/service/companies"
	"holdco/service/turns"
)

// BenchmarkSendMessage measures SendMessage (the checks, the row, the
// answer with turn_id; the workflow starts after the answer) on the
// embedded test server while the turns the earlier messages started run:
// each iteration messages another ready company, so no turn conflicts.
// Reports p50/p99.
func BenchmarkSendMessage(b *testing.B) {
	t := b
	w := newWorld(t, scripted.New(0), 100_000)
	ids := make([]string, b.N)
	for i := range ids {
		// Seeded: b.N companies pass any business limit.
		co := w.e.SeedCompany(b, w.owner, companies.CompanyInput{Name: fmt.Sprintf("Bench %d", i)})
		w.company = co.ID
		w.setReady(t)
		ids[i] = co.ID
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		_, err := w.e.Svc.Turns.SendMessage(w.owner, ids[i], turns.Message{Text: "Plan the week"})
		lat[i] = time.Since(start)
		require.NoError(b, err)
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkTurnThroughput runs whole turns (three model calls, two tool
// calls, scripted model at zero think time) one after another on one
// company and reports turns per minute; it also runs the same model calls
// and tools directly and reports the workflow's overhead as a ratio. It
// also reports where a turn's time goes: the message's answer (send-ms, and
// its p50/p99), the wait for the row's end (run-ms), for the workflow's
// close (close-ms), and the last turn's history (workflow tasks,
// activities, local activities, events; -v logs each event with the time
// since the previous one).
func BenchmarkTurnThroughput(b *testing.B) {
	t := b
	w := newWorld(t, scripted.New(0), 1_000_000)
	b.ResetTimer()
	start := time.Now()
	// Where a turn's time goes from the caller's side: the message's
	// answer, the row's end, the workflow's close.
	var sending, running, closing time.Duration
	sends := make([]time.Duration, 0, b.N)
	for range b.N {
		t0 := time.Now()
		st, err := w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: "Plan the launch"})
		require.NoError(b, err)
		t1 := time.Now()
		for {
			v, err := w.e.Svc.Turns.GetTurn(w.owner, st.TurnID)
			require.NoError(b, err)
			if !v.Status.Active() {
				require.Equal(b, models.TurnCompleted, v.Status)
				break
			}
			time.Sleep(time.Millisecond)
		}
		t2 := time.Now()
		// The ended turn's workflow closes before the next start.
		require.NoError(b, w.tmp.Client.GetWorkflow(context.Background(), "turn:"+w.company, "").Get(context.Background(), nil))
		sending, running, closing = sending+t1.Sub(t0), running+t2.Sub(t1), closing+time.Since(t2)
		sends = append(sends, t1.Sub(t0))
	}
	perTurn := time.Since(start) / time.Duration(b.N)
	b.StopTimer()
	reportHistory(b, w, "turn:"+w.company)
	n := float64(b.N) * float64(time.Millisecond)
	b.ReportMetric(float64(sending)/n, "send-ms")
	// SendMessage with no other turn running (BenchmarkSendMessage's
	// messages meet the turns the earlier ones started).
	sort.Slice(sends, func(i, j int) bool { return sends[i] < sends[j] })
	b.ReportMetric(float64(sends[len(sends)/2].Microseconds()), "send-p50-µs")
	b.ReportMetric(float64(sends[len(sends)*99/100].Microseconds()), "send-p99-µs")
	b.ReportMetric(float64(running)/n, "run-ms")
	b.ReportMetric(float64(closing)/n, "close-ms")

	// The same work without the workflow: three model calls and the two
	// tool calls they ask for, straight through the catalog.
	m := scripted.New(0)
	agent := w.agentCtx(t)
	directStart := time.Now()
	for range b.N {
		req := models.ModelRequest{Tools: w.e.Svc.Tools.Specs(), Messages: []models.ModelMessage{{Role: models.RoleUser,
			Content: []models.ContentBlock{{Type: models.ContentText, Text: "Plan the launch"}}}}}
		for {
			resp, err := m.Complete(context.Background(), req, func(string) {})
			require.NoError(b, err)
			req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleAssistant, Content: resp.Content})
			calls := resp.ToolCalls()
			if len(calls) == 0 {
				break
			}
			var results []models.ContentBlock
			for _, c := range calls {
				out, err := w.e.Svc.Tools.Call(agent, w.company, c.ToolName, c.Input)
				require.NoError(b, err)
				results = append(results, models.ContentBlock{Type: models.ContentToolResult, ToolUseID: c.ToolUseID, Text: string(out)})
			}
			req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleUser, Content: results})
		}
	}
	direct := time.Since(directStart) / time.Duration(b.N)
	b.ReportMetric(float64(time.Minute)/float64(perTurn), "turns/min")
	b.ReportMetric(float64(perTurn.Microseconds()), "µs/turn")
	b.ReportMetric(float64(direct.Microseconds()), "µs/direct")
	b.ReportMetric(float64(perTurn)/float64(direct), "overhead-x")
}

// reportHistory reports what the last turn's workflow cost in Temporal's
// terms (workflow tasks, activities, local activities: each a round trip
// or a marker in its history) and, with -v, logs its events with the time
// since the previous one: where a turn's time goes.
func reportHistory(b *testing.B, w *world, workflowID string) {
	ctx := context.Background()
	it := w.tmp.Client.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var wfTasks, activities, markers, events int
	var prev time.Time
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(b, err)
		events++
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			wfTasks++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			activities++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			markers++
		}
		at := e.GetEventTime().AsTime()
		gap := time.Duration(0)
		if !prev.IsZero() {
			gap = at.Sub(prev)
		}
		prev = at
		b.Logf("%3d %-45s +%6.1f ms", e.GetEventId(), e.GetEventType(), float64(gap.Microseconds())/1000)
	}
	b.ReportMetric(float64(wfTasks), "wftasks/turn")
	b.ReportMetric(float64(activities), "activities/turn")
	b.ReportMetric(float64(markers), "localacts/turn")
	b.ReportMetric(float64(events), "events/turn")
}
