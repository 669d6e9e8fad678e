package turns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"holdco/models"
	"holdco/observability"
	"holdco/service"
	"holdco/service/agenttools"
	"holdco/service/traces"
	"holdco/store"
	"holdco/workflows/contract"
)

// ToolAttempts is how often a tool call that failed on the service side is
// tried before the model is told it failed.
const ToolAttempts = 3

// ToolStep makes one tool call of a step and stores its result (part
// index+1); attempt is the how-manieth time this call runs (from 1). The
// call carries its idempotency key "<turn>/tool/<step>/<index>"
// (service.Call): a use case with a side effect stores the effect under
// an id derived from it, so a retry after a crash between the effect and
// the stored result finds the effect instead of repeating it, and a
// billable tool is paid under it before its effect (billing.PayFor: held,
// charged TOOL_USAGE on success, once). A tool's own refusal — including
// insufficient_credits for a billable tool — is a result for the model
// (IsError), not a failure of the turn; so is a service-side failure once
// ToolAttempts attempts have met it (before, it is returned: retried).
func (e *Engine) ToolStep(ctx context.Context, sc Scopes, in contract.ToolStepInput, attempt int) (contract.ToolStepResult, error) {
	index, scope := in.Index, sc.Company
	if _, err := e.Store.Turns().GetTurn(ctx, scope, in.TurnID); err != nil {
		return contract.ToolStepResult{}, err
	}
	answer, err := e.Store.Turns().GetTurnMessage(ctx, scope, in.TurnID, in.Step, 0)
	if err != nil {
		return contract.ToolStepResult{}, err
	}
	var call *models.ContentBlock
	n := 0
	for i := range answer.Content {
		if answer.Content[i].Type == models.ContentToolUse {
			if n == index {
				call = &answer.Content[i]
				break
			}
			n++
		}
	}
	if call == nil {
		return contract.ToolStepResult{}, turnFailure(models.CodeInternal, fmt.Sprintf("step %d has no tool call %d", in.Step, index))
	}
	var out contract.ToolStepResult
	if call.ToolName == agenttools.ToolAskQuestion {
		var q agenttools.AskQuestionInput
		_ = json.Unmarshal(call.Input, &q)
		out.Question = strings.TrimSpace(q.Question)
		if out.Question == "" {
			out.Question = "Could you tell me more?"
		}
	}
	stored, err := e.Store.Turns().GetTurnMessage(ctx, scope, in.TurnID, in.Step, index+1)
	switch {
	case errors.Is(err, models.ErrNotFound):
		stored, err = e.callTool(ctx, scope, in, *call, out.Question, attempt)
		if err != nil {
			return contract.ToolStepResult{}, err
		}
	case err != nil:
		return contract.ToolStepResult{}, err
	}
	out.IsError = len(stored.Content) > 0 && stored.Content[0].IsError
	return out, nil
}

func (e *Engine) callTool(ctx context.Context, scope store.CompanyScope, in contract.ToolStepInput, call models.ContentBlock, question string, attempt int) (models.TurnMessage, error) {
	var result json.RawMessage
	isError := false
	var refusal error
	if question != "" {
		result, _ = json.Marshal(map[string]string{"status": "asked", "note": "The question was sent to the user; their answer is their next message."})
	} else {
		agent := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialCompanyKey,
			CredentialID: "turn:" + in.TurnID, CompanyID: in.CompanyID, ConglomerateID: in.ConglomerateID})
		agent = service.WithCall(agent, service.Call{RunID: in.TurnID, Key: ToolCallKey(in.TurnID, in.Step, in.Index)})
		res, err := e.Tools.Call(agent, in.CompanyID, call.ToolName, call.Input)
		if err != nil {
			if ctx.Err() != nil {
				return models.TurnMessage{}, interrupted("tool "+call.ToolName, err)
			}
			var de *models.Error
			if !errors.As(err, &de) || de.Code == models.CodeInternal || de.Code == models.CodeUpstreamUnavailable {
				// The service side failed: retried by the activity's policy;
				// the model sees the error once the retries are spent.
				if attempt < ToolAttempts {
					return models.TurnMessage{}, err
				}
			}
			res, isError, refusal = agenttools.ErrorJSON(err), true, err
		}
		result = res
	}
	observability.AgentToolCalled(call.ToolName, e.Tools.Has(call.ToolName), refusal)
	// The call's trace part is written beside its stored result (a retry
	// that stores it after a failure writes the part again, replacing it).
	traced := e.traceAside(ctx, in.TurnID, fmt.Sprintf("%06d-tool-%02d", in.Step, in.Index),
		traces.Event{Type: traces.EventToolCall, Step: in.Step, Tool: call.ToolName, CallID: call.ToolUseID, Data: string(call.Input)},
		traces.Event{Type: traces.EventToolResult, Step: in.Step, Tool: call.ToolName, CallID: call.ToolUseID,
			Data: map[string]any{"is_error": isError, "result": string(result)}})
	defer traced()
	msg, _, err := e.Store.Turns().PutTurnMessage(ctx, scope, models.TurnMessage{TurnID: in.TurnID, Step: in.Step, Part: in.Index + 1,
		Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentToolResult, ToolUseID: call.ToolUseID, Text: string(result), IsError: isError}}})
	return msg, err
}

// ToolCallKey is the idempotency key of a step's index-th tool call: its
// effects' ids derive from it and a billable tool is charged under it.
func ToolCallKey(turnID string, step, index int) string {
	return fmt.Sprintf("%s/tool/%d/%d", turnID, step, index)
}
