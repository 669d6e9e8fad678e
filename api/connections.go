package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/service/oauth"
)

// ConnectionResponse is an AI assistant the user connected through the
// authorization server.
type ConnectionResponse struct {
	ID          string    `json:"id" format:"uuid"`
	ClientID    string    `json:"client_id" doc:"The assistant's OAuth client id (an https URL for a client ID metadata document)."`
	ClientName  string    `json:"client_name"`
	Verified    bool      `json:"verified" doc:"true: registered with holdco (pre-registered); false: self-registered, not verified."`
	RedirectURI string    `json:"redirect_uri" doc:"The last approved redirect URI."`
	ConnectedAt time.Time `json:"connected_at" doc:"When the user last approved the assistant."`
	LiveTokens  int64     `json:"live_tokens" doc:"Access tokens of the assistant that still work (at most 100)."`
}

type connectionHandlers struct{ svc *oauth.Service }

func registerConnectionRoutes(api huma.API, h *connectionHandlers) {
	huma.Register(api, huma.Operation{
		OperationID: "list-connections", Method: http.MethodGet, Path: "/auth/connections", Tags: []string{"connections"},
		Summary:     "List my connected assistants",
		Description: "AI assistants the user approved on the authorization server's consent page, most recently approved first.",
		Security:    bearerSecurity,
	}, h.list)
	huma.Register(api, huma.Operation{
		OperationID: "disconnect-connection", Method: http.MethodDelete, Path: "/auth/connections/{connection_id}", Tags: []string{"connections"},
		Summary: "Disconnect an assistant",
		Description: "Revokes every access token of the assistant for the user and forgets the consent (the next authorization asks again). " +
			"Credentials the assistant already obtained through its tools (a database connection string, a repository key, a company API key) are not revoked. " +
			"404 when no such connection, 403 when it is another user's.",
		Security: bearerSecurity, DefaultStatus: http.StatusNoContent,
	}, h.disconnect)
}

type connectionListOutput struct{ Body []ConnectionResponse }

func (h *connectionHandlers) list(ctx context.Context, _ *struct{}) (*connectionListOutput, error) {
	conns, err := h.svc.ListConnections(ctx)
	if err != nil {
		return nil, err
	}
	out := &connectionListOutput{Body: make([]ConnectionResponse, 0, len(conns))}
	for _, c := range conns {
		out.Body = append(out.Body, toConnectionResponse(c))
	}
	return out, nil
}

func toConnectionResponse(c oauth.Connection) ConnectionResponse {
	return ConnectionResponse{ID: c.ID, ClientID: c.ClientID, ClientName: c.ClientName, Verified: c.Verified,
		RedirectURI: c.RedirectURI, ConnectedAt: c.ApprovedAt, LiveTokens: c.LiveTokens}
}

type connectionIDInput struct {
	ConnectionID string `path:"connection_id" format:"uuid"`
}

func (h *connectionHandlers) disconnect(ctx context.Context, in *connectionIDInput) (*struct{}, error) {
	return nil, h.svc.Disconnect(ctx, in.ConnectionID)
}
