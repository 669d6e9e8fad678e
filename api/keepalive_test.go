package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type slowInput struct {
	Body struct {
		Wait bool `json:"wait"`
	}
}

type slowOutput struct {
	Body struct {
		Canceled bool `json:"canceled"`
	}
}

// TestSlowHandlerKeepsItsConnectionUsable: a handler still working when
// huma's body read deadline passes (a message waiting for an unreachable
// Temporal took 5 s, huma's default) must leave its kept-alive
// connection usable. Before, net/http's background read hit that
// deadline and canceled the connection's context: the next request on
// the connection started canceled (500 "context canceled" for every
// request of that client).
func TestSlowHandlerKeepsItsConnectionUsable(t *testing.T) {
	r := newTestRouter(t, nil)
	const bodyReadTimeout = 50 * time.Millisecond
	huma.Register(r.API, huma.Operation{OperationID: "post-slow", Method: http.MethodPost, Path: "/slow", BodyReadTimeout: bodyReadTimeout},
		func(ctx context.Context, in *slowInput) (*slowOutput, error) {
			if in.Body.Wait {
				// The scenario: a handler slower than the body's read
				// deadline (not a synchronisation).
				time.Sleep(6 * bodyReadTimeout)
			}
			out := &slowOutput{}
			out.Body.Canceled = ctx.Err() != nil
			return out, nil
		})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)
	post := func(wait bool) (status int, canceled, reused bool) {
		var trace httptrace.ClientTrace
		trace.GotConn = func(info httptrace.GotConnInfo) { reused = info.Reused }
		body := `{"wait":false}`
		if wait {
			body = `{"wait":true}`
		}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), &trace), http.MethodPost, srv.URL+"/slow", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out struct {
			Canceled bool `json:"canceled"`
		}
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		}
		return resp.StatusCode, out.Canceled, reused
	}
	status, canceled, _ := post(true)
	require.Equal(t, http.StatusOK, status)
	assert.False(t, canceled, "the slow request itself")
	for i := range 3 {
		status, canceled, reused := post(false)
		require.Equal(t, http.StatusOK, status)
		require.True(t, reused, "request %d rides the kept-alive connection of the slow one", i+1)
		assert.False(t, canceled, "request %d on the connection after the slow one starts with a live context", i+1)
	}
}
