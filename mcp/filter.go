package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol filter closes what the SDK leaves open for a server that
// speaks 2026-07-28 only: the SDK answers a legacy initialize (as
// 2025-11-25), serves a request with neither version header nor _meta as
// 2025-03-26, and answers an old version header with a plain-text 400.
// Here every one of them, and any other revision, gets JSON-RPC -32022
// UnsupportedProtocolVersion with data {supported, requested}. It also
// requires Mcp-Name (the task id) on tasks/*, which the SDK checks only
// for tools/call, prompts/get and resources/read.

const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerName            = "Mcp-Name"
	// assumedVersion is the revision a streamable HTTP request without a
	// version header is read as.
	assumedVersion = "2025-03-26"
)

// message is the part of a JSON-RPC message the filter reads.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  struct {
		Meta            map[string]any `json:"_meta"`
		ProtocolVersion string         `json:"protocolVersion"` // initialize
		TaskID          *string        `json:"taskId"`          // tasks/*
		Cursor          *string        `json:"cursor"`          // tools/list
	} `json:"params"`
}

func protocolFilter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		header := r.Header.Get(headerProtocolVersion)
		var msg message
		// A batch or a malformed body is left to the SDK, which refuses
		// both; the header alone decides for them.
		_ = json.Unmarshal(body, &msg)
		metaVersion, _ := msg.Params.Meta[sdk.MetaKeyProtocolVersion].(string)
		switch {
		case msg.Method == "initialize":
			// The legacy handshake: answered as a JSON-RPC result (200)
			// so an older client reads the refusal as its answer.
			requested := msg.Params.ProtocolVersion
			if requested == "" {
				requested = header
			}
			refuse(w, http.StatusOK, msg.ID, requested)
			return
		case header == "" && metaVersion == "":
			refuse(w, http.StatusBadRequest, msg.ID, assumedVersion)
			return
		case header != "" && header != ProtocolVersion:
			refuse(w, http.StatusBadRequest, msg.ID, header)
			return
		case header == "" && metaVersion != ProtocolVersion:
			refuse(w, http.StatusBadRequest, msg.ID, metaVersion)
			return
		}
		if strings.HasPrefix(msg.Method, "tasks/") {
			name := r.Header.Get(headerName)
			switch {
			case name == "":
				mismatch(w, msg.ID, fmt.Sprintf("missing required %s header (the task id) for method %q", headerName, msg.Method))
				return
			case msg.Params.TaskID != nil && name != *msg.Params.TaskID:
				mismatch(w, msg.ID, fmt.Sprintf("header mismatch: %s header value %q does not match taskId %q", headerName, name, *msg.Params.TaskID))
				return
			}
		}
		if lr, ok := plainToolsList(r, body, &msg); ok {
			r = r.WithContext(context.WithValue(r.Context(), toolsListKey{}, lr))
		} else if cr, ok := plainToolsCall(r, body, &msg); ok {
			r = r.WithContext(context.WithValue(r.Context(), toolsCallKey{}, cr))
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers -32022 with the supported revision and the requested one.
func refuse(w http.ResponseWriter, status int, id json.RawMessage, requested string) {
	data, _ := json.Marshal(sdk.UnsupportedProtocolVersionData{Supported: []string{ProtocolVersion}, Requested: requested})
	msg := fmt.Sprintf("Unsupported protocol version %q: this server speaks %s only.", requested, ProtocolVersion)
	if requested == "" {
		msg = "Unsupported protocol version: this server speaks " + ProtocolVersion + " only."
	}
	writeRPCError(w, status, id, &jsonrpc.Error{Code: sdk.CodeUnsupportedProtocolVersion, Message: msg, Data: data})
}

func mismatch(w http.ResponseWriter, id json.RawMessage, message string) {
	writeRPCError(w, http.StatusBadRequest, id, &jsonrpc.Error{Code: sdk.CodeHeaderMismatch, Message: message})
}

// writeRPCError writes a JSON-RPC error response; id is the request's (null
// for a notification or an unreadable body).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *jsonrpc.Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	writeJSON(w, status, struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
}
