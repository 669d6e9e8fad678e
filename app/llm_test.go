package app

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/config"
	"holdco/models"
	"holdco/providers/llm/anthropic"
	"holdco/providers/llm/openai"
	"holdco/providers/llm/scripted"
)

func TestNewModelFollowsTheConfiguration(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) config.LLM {
		c, err := config.Load(func(k string) string { return env[k] })
		require.NoError(t, err)
		return c.LLM
	}
	m, err := newModel(load(map[string]string{"HOLDCO_LLM_SCRIPTED_STEP_DELAY": "0s"}))
	require.NoError(t, err)
	require.IsType(t, &scripted.Model{}, m.(measuredModel).next)
	resp, err := m.Complete(context.Background(), models.ModelRequest{Messages: []models.ModelMessage{{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: "hello"}}}}}, nil)
	require.NoError(t, err)
	assert.Equal(t, models.StopEndTurn, resp.StopReason)

	m, err = newModel(load(map[string]string{"HOLDCO_LLM_PROVIDER": "anthropic", "HOLDCO_LLM_MODEL": "claude-x", "HOLDCO_LLM_API_KEY": "k"}))
	require.NoError(t, err)
	assert.IsType(t, &anthropic.Model{}, m.(measuredModel).next)

	m, err = newModel(load(map[string]string{"HOLDCO_LLM_PROVIDER": "openai", "HOLDCO_LLM_MODEL": "llama3.2", "HOLDCO_LLM_BASE_URL": "http://localhost:11434/v1"}))
	require.NoError(t, err)
	assert.IsType(t, &openai.Model{}, m.(measuredModel).next)

	_, err = newModel(config.LLM{Provider: "gemini"})
	assert.Error(t, err)
}
