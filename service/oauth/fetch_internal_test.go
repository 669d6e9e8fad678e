package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A metadata fetch past its deadline says so whichever timer fires first:
// the transport's response header timeout (the same length as the
// context's deadline) can end the request while the context is still
// live, and that is a timeout too, not "could not be fetched".
func TestTimedOutKnowsTheTransportsTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 50 * time.Millisecond}}
	_, err := client.Get(srv.URL)
	require.Error(t, err)
	live := context.Background()
	assert.True(t, timedOut(live, err), "the transport's timeout: %v", err)

	ended, cancel := context.WithDeadline(live, time.Now().Add(-time.Second))
	defer cancel()
	assert.True(t, timedOut(ended, errors.New("context deadline exceeded")), "the context's deadline")
	assert.False(t, timedOut(live, errors.New("connection refused")), "another failure")
}
