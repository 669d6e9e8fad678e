package app

import (
	"context"
	"fmt"

	"holdco/config"
	"holdco/models"
	"holdco/providers/llm/anthropic"
	"holdco/providers/llm/openai"
	"holdco/providers/llm/scripted"
)

// languageModel is what the agents' turns call; the turn activity declares
// the same method.
type languageModel interface {
	Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
}

// newModel builds the configured language model adapter.
func newModel(cfg config.LLM) (languageModel, error) {
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
