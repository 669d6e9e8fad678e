package scripted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

// The consumer's interface, as the turn activity will declare it.
var _ interface {
	Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
} = (*Model)(nil)

var allTools = []models.ToolSpec{
	{Name: ToolAskQuestion, InputSchema: json.RawMessage(`{"type":"object"}`)},
	{Name: ToolWriteDocument, InputSchema: json.RawMessage(`{"type":"object"}`)},
	{Name: ToolCreateTask, InputSchema: json.RawMessage(`{"type":"object"}`)},
}

func user(text string) models.ModelMessage {
	return models.ModelMessage{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: text}}}
}

// run plays a turn the way the turn workflow will: call the model, run
// every tool call with result, feed the results back, until end_turn.
func run(t *testing.T, m *Model, req models.ModelRequest, result func(call models.ContentBlock) models.ContentBlock) ([]models.ModelResponse, string) {
	t.Helper()
	var responses []models.ModelResponse
	var streamed strings.Builder
	for range 10 {
		resp, err := m.Complete(context.Background(), req, func(d string) { streamed.WriteString(d) })
		require.NoError(t, err)
		responses = append(responses, resp)
		if resp.StopReason != models.StopToolUse {
			return responses, streamed.String()
		}
		req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleAssistant, Content: resp.Content})
		var results []models.ContentBlock
		for _, call := range resp.ToolCalls() {
			results = append(results, result(call))
		}
		req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleUser, Content: results})
	}
	t.Fatal("the script did not end")
	return nil, ""
}

func ok(call models.ContentBlock) models.ContentBlock {
	return models.ContentBlock{Type: models.ContentToolResult, ToolUseID: call.ToolUseID, Text: "done"}
}

func TestToolsPathWritesADocumentThenCreatesATaskThenAnswers(t *testing.T) {
	responses, streamed := run(t, New(0), models.ModelRequest{Tools: allTools, Messages: []models.ModelMessage{user("Launch a bakery in Lisbon")}}, ok)
	require.Len(t, responses, 3)

	doc := responses[0].ToolCalls()
	require.Len(t, doc, 1)
	assert.Equal(t, ToolWriteDocument, doc[0].ToolName)
	assert.Equal(t, "call_1", doc[0].ToolUseID)
	assert.JSONEq(t, `{"document_type":"notes","title":"Notes: Launch a bakery in Lisbon","content":"# Notes: Launch a bakery in Lisbon\n\nWhat was asked:\n\nLaunch a bakery in Lisbon\n"}`, string(doc[0].Input))

	task := responses[1].ToolCalls()
	require.Len(t, task, 1)
	assert.Equal(t, ToolCreateTask, task[0].ToolName)
	assert.Equal(t, "call_2", task[0].ToolUseID)
	assert.JSONEq(t, `{"title":"Follow up: Launch a bakery in Lisbon","description":"Follow up on: Launch a bakery in Lisbon"}`, string(task[0].Input))

	final := responses[2]
	assert.Equal(t, models.StopEndTurn, final.StopReason)
	assert.Empty(t, final.ToolCalls())
	assert.Equal(t, `I wrote the document "Notes: Launch a bakery in Lisbon". I created the task "Follow up: Launch a bakery in Lisbon".`, final.Text())
	assert.Equal(t, "I'll write down notes first.Next, I'll create a task."+final.Text(), streamed, "every text reaches onText")
	for _, r := range responses {
		assert.Equal(t, ModelName, r.Model)
		assert.Positive(t, r.Usage.InputTokens)
		assert.Positive(t, r.Usage.OutputTokens)
	}
	assert.Greater(t, responses[2].Usage.InputTokens, responses[0].Usage.InputTokens, "the conversation grew")
}

func TestQuestionPath(t *testing.T) {
	for _, msg := range []string{"What should we sell first?", "Plan the launch, but ASK ME about the budget"} {
		resp, err := New(0).Complete(context.Background(), models.ModelRequest{Tools: allTools, Messages: []models.ModelMessage{user(msg)}}, nil)
		require.NoError(t, err)
		calls := resp.ToolCalls()
		require.Len(t, calls, 1, msg)
		assert.Equal(t, ToolAskQuestion, calls[0].ToolName)
		var in AskQuestionInput
		require.NoError(t, json.Unmarshal(calls[0].Input, &in))
		assert.Contains(t, in.Question, msg[:20])
		assert.Equal(t, models.StopToolUse, resp.StopReason)
	}
}

func TestAnAnswerToTheQuestionStartsTheWork(t *testing.T) {
	m := New(0)
	first, err := m.Complete(context.Background(), models.ModelRequest{Tools: allTools, Messages: []models.ModelMessage{user("Which market?")}}, nil)
	require.NoError(t, err)
	require.Equal(t, ToolAskQuestion, first.ToolCalls()[0].ToolName)

	// The turn ended waiting; the user's answer opens the next turn.
	msgs := []models.ModelMessage{
		user("Which market?"),
		{Role: models.RoleAssistant, Content: first.Content},
		{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentToolResult, ToolUseID: "call_1", Text: "asked"}}},
		user("Portugal, bakeries"),
	}
	next, err := m.Complete(context.Background(), models.ModelRequest{Tools: allTools, Messages: msgs}, nil)
	require.NoError(t, err)
	calls := next.ToolCalls()
	require.Len(t, calls, 1)
	assert.Equal(t, ToolWriteDocument, calls[0].ToolName)
	assert.Equal(t, "call_2", calls[0].ToolUseID, "ids count the whole conversation")
}

func TestAQuestionAnsweredByAToolResultEndsTheTurn(t *testing.T) {
	responses, _ := run(t, New(0), models.ModelRequest{Tools: allTools, Messages: []models.ModelMessage{user("ask me anything")}}, ok)
	require.Len(t, responses, 2)
	assert.True(t, strings.HasPrefix(responses[1].Text(), "I asked: Before I start"))
}

func TestOnlyOfferedToolsAreCalled(t *testing.T) {
	responses, _ := run(t, New(0), models.ModelRequest{Tools: allTools[2:], Messages: []models.ModelMessage{user("What now?")}}, ok)
	require.Len(t, responses, 2)
	assert.Equal(t, ToolCreateTask, responses[0].ToolCalls()[0].ToolName)

	responses, _ = run(t, New(0), models.ModelRequest{Messages: []models.ModelMessage{user("Hello there")}}, ok)
	require.Len(t, responses, 1)
	assert.Equal(t, "I read your message: Hello there.", responses[0].Text())
}

func TestAFailedToolIsReported(t *testing.T) {
	responses, _ := run(t, New(0), models.ModelRequest{Tools: allTools, Messages: []models.ModelMessage{user("Open a shop")}}, func(call models.ContentBlock) models.ContentBlock {
		if call.ToolName == ToolWriteDocument {
			return models.ContentBlock{Type: models.ContentToolResult, ToolUseID: call.ToolUseID, Text: "document too large", IsError: true}
		}
		return ok(call)
	})
	final := responses[len(responses)-1]
	assert.Equal(t, `The tool write_document failed: document too large. I created the task "Follow up: Open a shop".`, final.Text())
}

func TestTheSubjectIsTheFirstLineCut(t *testing.T) {
	long := strings.Repeat("ab ", 40) + "\nsecond line"
	resp, err := New(0).Complete(context.Background(), models.ModelRequest{Tools: allTools, Messages: []models.ModelMessage{user(long)}}, nil)
	require.NoError(t, err)
	var in WriteDocumentInput
	require.NoError(t, json.Unmarshal(resp.ToolCalls()[0].Input, &in))
	assert.Equal(t, "Notes: "+strings.TrimSpace(strings.Repeat("ab ", 20))+"…", in.Title)
	assert.Contains(t, in.Content, "second line")
}

// A long subject is cut after a whole word, not inside one.
func TestTheSubjectIsCutAtAWordBoundary(t *testing.T) {
	idea := "Hand-drawn maps of lighthouses, sold as prints to people who pay for framed art and gifts"
	got := subjectOf(idea)
	require.True(t, strings.HasSuffix(got, "…"), got)
	kept := strings.TrimSuffix(got, "…")
	require.True(t, strings.HasPrefix(idea, kept), got)
	assert.Equal(t, byte(' '), idea[len(kept)], "cut after a whole word: %q", got)
	assert.LessOrEqual(t, len([]rune(kept)), subjectLen)
	assert.Equal(t, "x", subjectOf("x"))
	one := strings.Repeat("a", subjectLen+5)
	assert.Equal(t, strings.Repeat("a", subjectLen)+"…", subjectOf(one), "one long word is cut where it must be")
}

func TestDeterministic(t *testing.T) {
	req := models.ModelRequest{System: "s", Tools: allTools, Messages: []models.ModelMessage{user("Launch a bakery")}}
	a, textA := run(t, New(0), req, ok)
	b, textB := run(t, New(0), req, ok)
	assert.Equal(t, a, b)
	assert.Equal(t, textA, textB)
}

func TestTextArrivesInChunksThatJoinBack(t *testing.T) {
	text := `I wrote the document "Notes: x y z". I created the task "Follow up: x y z".`
	chunks := chunk(text)
	assert.Greater(t, len(chunks), 3)
	assert.Equal(t, text, strings.Join(chunks, ""))
	for _, c := range chunks {
		assert.LessOrEqual(t, len(strings.Fields(c)), wordsPerChunk)
	}
}

func TestCancellationDuringAStepStopsIt(t *testing.T) {
	m := New(time.Hour) // a step that would never end on its own
	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	done := make(chan error, 1)
	go func() {
		_, err := m.Complete(ctx, models.ModelRequest{Tools: allTools, Messages: []models.ModelMessage{user("Launch")}}, func(d string) { got = append(got, d) })
		done <- err
	}()
	cancel()
	err := <-done
	var callErr *models.ModelCallError
	require.ErrorAs(t, err, &callErr)
	assert.Equal(t, models.ModelCanceled, callErr.Kind)
	assert.False(t, callErr.Retryable)
	assert.Empty(t, got)
}

func TestADeadlineDuringAStepIsATimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err := New(time.Hour).Complete(ctx, models.ModelRequest{Messages: []models.ModelMessage{user("Launch")}}, nil)
	var callErr *models.ModelCallError
	require.ErrorAs(t, err, &callErr)
	assert.Equal(t, models.ModelTimeout, callErr.Kind)
	assert.True(t, callErr.Retryable)
}

func TestAStepDelayStreamsProgressively(t *testing.T) {
	var got []string
	resp, err := New(4*time.Millisecond).Complete(context.Background(), models.ModelRequest{Messages: []models.ModelMessage{user("Hello there, how are things going")}}, func(d string) { got = append(got, d) })
	require.NoError(t, err)
	assert.Equal(t, resp.Text(), strings.Join(got, ""))
	assert.Greater(t, len(got), 1)
}
