package app

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNoEmbeddedTemporalNamesTheSetting: a program that links the app
// without an embedded server (not the holdco command) and has no
// TEMPORAL_ADDRESS is told to set it.
func TestNoEmbeddedTemporalNamesTheSetting(t *testing.T) {
	_, err := startEmbedded(context.Background(), nil, EmbeddedTemporalOptions{Namespace: "default"})
	assert.ErrorIs(t, err, errNoEmbeddedTemporal)
	assert.ErrorContains(t, err, "TEMPORAL_ADDRESS")
}
