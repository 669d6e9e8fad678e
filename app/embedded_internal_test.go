package app

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/client"

	"holdco/config"
)

// TestNoEmbeddedTemporalNamesTheSetting: a program that links the app
// without an embedded server (not the holdco command) and has no
// TEMPORAL_ADDRESS is told to set it.
func TestNoEmbeddedTemporalNamesTheSetting(t *testing.T) {
	_, err := startEmbedded(context.Background(), nil, EmbeddedTemporalOptions{Namespace: "default"})
	assert.ErrorIs(t, err, errNoEmbeddedTemporal)
	assert.ErrorContains(t, err, "TEMPORAL_ADDRESS")
}

// TestEmbeddedTemporalIsReachedUncompressed: the client of the embedded
// server (in this process, over loopback) sends its requests without
// gzip; a Temporal elsewhere keeps the SDK's default (gzip).
func TestEmbeddedTemporalIsReachedUncompressed(t *testing.T) {
	_, none := temporalConnection(config.Temporal{}).GrpcCompression.(*client.GrpcCompressionNone)
	assert.True(t, none, "the embedded server's client compresses")
	assert.Nil(t, temporalConnection(config.Temporal{Address: "temporal.internal:7233"}).GrpcCompression)
}
