package scripted

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

var interviewTools = []models.ToolSpec{
	{Name: models.ToolAskFounder, InputSchema: json.RawMessage(`{"type":"object"}`)},
	{Name: models.ToolProposeCompany, InputSchema: json.RawMessage(`{"type":"object"}`)},
	{Name: models.ToolRejectIdea, InputSchema: json.RawMessage(`{"type":"object"}`)},
}

// interviewStep calls the model on the interview so far and answers its
// tool call with answer (the founder's answer as the call's result).
func interviewStep(t *testing.T, req *models.ModelRequest, answer string) models.ContentBlock {
	t.Helper()
	resp, err := New(0).Complete(context.Background(), *req, nil)
	require.NoError(t, err)
	calls := resp.ToolCalls()
	require.Len(t, calls, 1)
	assert.Equal(t, models.StopToolUse, resp.StopReason)
	req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleAssistant, Content: resp.Content})
	if answer != "" {
		req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleUser,
			Content: []models.ContentBlock{{Type: models.ContentToolResult, ToolUseID: calls[0].ToolUseID, Text: answer}}})
	}
	return calls[0]
}

func TestScriptedInterview(t *testing.T) {
	req := models.ModelRequest{Tools: interviewTools, Messages: []models.ModelMessage{user("Guided hiking maps for families")}}
	call := interviewStep(t, &req, "yes")
	var ask models.AskFounderInput
	require.NoError(t, json.Unmarshal(call.Input, &ask))
	assert.Equal(t, models.ToolAskFounder, call.ToolName)
	assert.Equal(t, "name", ask.Topic)
	assert.Contains(t, ask.Question, `"Guided Hiking Maps"`)

	call = interviewStep(t, &req, "Families who hike on weekends")
	require.NoError(t, json.Unmarshal(call.Input, &ask))
	assert.Equal(t, "customers", ask.Topic)

	call = interviewStep(t, &req, "name: Trail Kin")
	assert.Equal(t, models.ToolProposeCompany, call.ToolName)
	var p models.ProposeCompanyInput
	require.NoError(t, json.Unmarshal(call.Input, &p))
	assert.Equal(t, "Guided Hiking Maps", p.Name, "yes takes the suggestion")
	assert.Equal(t, "guided-hiking-maps", p.Handle)
	assert.Equal(t, "Guided Hiking Maps serves Families who hike on weekends: Guided hiking maps for families.", p.Mission)

	// A change asked after the proposal: proposed again, renamed.
	call = interviewStep(t, &req, "")
	require.NoError(t, json.Unmarshal(call.Input, &p))
	assert.Equal(t, "Trail Kin", p.Name)
	assert.Equal(t, "trail-kin", p.Handle)
	assert.Contains(t, p.FoundingPlan, "## Changes asked\n\n- name: Trail Kin")
	assert.Equal(t, "call_4", call.ToolUseID)

	// Too short an idea is refused.
	short := models.ModelRequest{Tools: interviewTools, Messages: []models.ModelMessage{user("maps")}}
	call = interviewStep(t, &short, "")
	assert.Equal(t, models.ToolRejectIdea, call.ToolName)
}

func TestScriptedFirstPassWritesTheFoundingPlan(t *testing.T) {
	resp, err := New(0).Complete(context.Background(), models.ModelRequest{Tools: allTools, Messages: []models.ModelMessage{user("First pass: you run Maps.")}}, nil)
	require.NoError(t, err)
	var in WriteDocumentInput
	require.NoError(t, json.Unmarshal(resp.ToolCalls()[0].Input, &in))
	assert.Equal(t, "founding_plan", in.DocumentType)
}
