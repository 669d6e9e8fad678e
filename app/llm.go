package app

import (
	"context"
	"fmt"
	"time"

	"holdco/config"
	"holdco/models"
	"holdco/observability"
	"holdco/providers/llm/anthropic"
	"holdco/providers/llm/openai"
	"holdco/providers/llm/scripted"
)

// languageModel is what the agents' turns call; the turn activity declares
// the same method.
type languageModel interface {
	Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
}

// newModel builds the configured language model adapter, measured
// (holdco_model_calls_total, holdco_model_call_duration_seconds).
func newModel(cfg config.LLM) (languageModel, error) {
	m, err := newModelAdapter(cfg)
	if err != nil {
		return nil, err
	}
	return measuredModel{next: m, provider: string(cfg.Provider)}, nil
}

// measuredModel counts and times every call of the model it wraps: the one
// place all of the agents' and the founding interviews' calls pass.
type measuredModel struct {
	next     languageModel
	provider string
}

func (m measuredModel) Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error) {
	began := time.Now()
	resp, err := m.next.Complete(ctx, req, onText)
	observability.ModelCalled(m.provider, err, time.Since(began))
	return resp, err
}

func newModelAdapter(cfg config.LLM) (languageModel, error) {
	switch cfg.Provider {
	case config.LLMScripted:
		return scripted.New(cfg.ScriptedStepDelay), nil
	case config.LLMAnthropic:
		return anthropic.New(anthropic.Config{APIKey: cfg.APIKey, Model: cfg.Model, BaseURL: cfg.BaseURL, MaxTokens: cfg.MaxTokens, Timeout: cfg.Timeout})
	case config.LLMOpenAI:
		return openai.New(openai.Config{APIKey: cfg.APIKey, Model: cfg.Model, BaseURL: cfg.BaseURL, MaxTokens: cfg.MaxTokens, Timeout: cfg.Timeout})
	}
	return nil, fmt.Errorf("unknown language model provider %q", cfg.Provider)
}
