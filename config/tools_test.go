package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolsSettings(t *testing.T) {
	c, err := Load(env(nil))
	require.NoError(t, err)
	assert.False(t, c.Tools.ResearchEnabled(), "no research provider by default")
	assert.False(t, c.Tools.ImagesEnabled(), "no image provider by default")
	assert.Equal(t, "gpt-image-1", c.Tools.ImagesModel)

	c, err = Load(env(map[string]string{"HOLDCO_RESEARCH_API_KEY": "brave-key", "HOLDCO_RESEARCH_BASE_URL": "http://127.0.0.1:9999/res/v1/",
		"HOLDCO_IMAGES_API_KEY": "sk-images", "HOLDCO_IMAGES_MODEL": "dall-e-3"}))
	require.NoError(t, err)
	assert.Equal(t, Tools{ResearchAPIKey: "brave-key", ResearchBaseURL: "http://127.0.0.1:9999/res/v1", ImagesAPIKey: "sk-images", ImagesModel: "dall-e-3"}, c.Tools)
	assert.True(t, c.Tools.ResearchEnabled())
	assert.True(t, c.Tools.ImagesEnabled())

	// A local compatible server needs no key.
	c, err = Load(env(map[string]string{"HOLDCO_IMAGES_BASE_URL": "http://localhost:8000/v1"}))
	require.NoError(t, err)
	assert.True(t, c.Tools.ImagesEnabled())
}
