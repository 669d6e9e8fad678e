package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"

	"holdco/models"
	"holdco/service"
	"holdco/service/agenttools"
	"holdco/service/files"
)

// MaxUploadBytes is the largest file upload_file takes (decoded): a file
// sent inline.
const MaxUploadBytes = files.MaxInlineBytes

// FileSource labels the files assistants upload.
const FileSource = "connector"

// Upload is what upload_file stores.
type Upload struct {
	Business      string
	Filename      string
	Path          string
	ContentType   string
	ContentBase64 string
}

// Uploaded is upload_file's answer: the id to attach to send_message.
type Uploaded struct {
	FileID      string `json:"file_id"`
	BusinessID  string `json:"business_id"`
	Path        string `json:"path"`
	SizeBytes   int64  `json:"size_bytes"`
	ContentType string `json:"content_type"`
}

// UploadFile stores base64 content (at most 3 MB decoded) as a file of
// the business through service/files (its quota, path rules and rate
// limit, shared with the business's agents).
func (s *Service) UploadFile(ctx context.Context, in Upload) (Uploaded, error) {
	ctx, ac, err := s.resolve(ctx, in.Business)
	if err != nil {
		return Uploaded{}, err
	}
	data, err := files.InlineContent(in.ContentBase64, true, "content_base64")
	if err != nil {
		return Uploaded{}, err
	}
	f, err := s.Files.Upload(ctx, ac.ID, files.UploadInput{Path: in.Path, Source: FileSource, Filename: in.Filename,
		ContentType: in.ContentType, Size: int64(len(data)), Body: bytes.NewReader(data)})
	if err != nil {
		return Uploaded{}, err
	}
	return Uploaded{FileID: f.ID, BusinessID: ac.ID, Path: f.Path, SizeBytes: f.SizeBytes, ContentType: f.ContentType}, nil
}

// Subscription is cancel_subscription's answer.
type Subscription struct {
	SubscriptionID string `json:"subscription_id"`
	BusinessID     string `json:"business_id"`
	Status         string `json:"status"`
}

// CancelSubscription cancels a subscription one of the business's
// customers bought (service/sales keeps the rules).
func (s *Service) CancelSubscription(ctx context.Context, business, subscription string) (Subscription, error) {
	ctx, ac, err := s.resolve(ctx, business)
	if err != nil {
		return Subscription{}, err
	}
	sub, err := s.Sales.CancelSubscription(ctx, ac.ID, subscription)
	if err != nil {
		return Subscription{}, err
	}
	return Subscription{SubscriptionID: sub.ID, BusinessID: ac.ID, Status: sub.Status}, nil
}

// LinkAction is a link-only tool: it changes nothing and answers a page
// of the web app where the signed-in owner does it.
type LinkAction struct {
	Name string
	// PerBusiness: the tool takes `business` and the page is the
	// business's.
	PerBusiness bool
	Description string
	Note        string
}

// LinkActions are the link-only tools, by name.
var LinkActions = []LinkAction{
	{"archive_business", true, "Open the page where the owner archives a business (irreversible). Changes nothing by itself.",
		"Archiving is irreversible and done by the account's owner in the browser: open the link, sign in and confirm."},
	{"cancel_platform_subscription", false, "Open the page where the owner cancels the account's plan. Changes nothing by itself.",
		"The plan is cancelled by the account's owner in the browser: open the link and sign in."},
	{"change_auto_topup", false, "Open the page where the owner changes automatic credit top-ups. Changes nothing by itself.",
		"Automatic top-ups charge the saved card; the owner changes them in the browser: open the link and sign in."},
	{"delete_account", false, "Open the page where the user deletes their account. Changes nothing by itself.",
		"Deleting the account archives every business and cannot be undone; it is done in the browser: open the link and sign in."},
	{"request_withdrawal", true, "Open the page where the owner withdraws a business's earnings. Changes nothing by itself.",
		"Withdrawals go to the account's payout details and are requested in the browser: open the link and sign in."},
	{"rotate_api_key", true, "Open the page where the owner rotates a business's API key. Changes nothing by itself.",
		"Rotating the key stops the old one within a minute; only a person does it, in the browser: open the link and sign in."},
	{"rotate_app_signin_secret", true, "Open the page where the owner rotates the sign-in secret of a business's app. Changes nothing by itself.",
		"Rotating the secret signs the app's users out; only a person does it, in the browser: open the link and sign in."},
	{"rotate_user_auth_secret", true, "Open the page where the owner rotates a business's user-authentication secret. Changes nothing by itself.",
		"Rotating the secret breaks sign-in until the app uses the new one; only a person does it, in the browser: open the link and sign in."},
}

// Link is a link-only tool's answer.
type Link struct {
	Action string `json:"action"`
	URL    string `json:"url"`
	Note   string `json:"note"`
}

// OpenLink answers the page of a link-only action: the web app's
// dashboard of the account (and business), where the signed-in owner does
// it. The business is resolved first, so a link is only ever made for a
// business of the caller's account.
func (s *Service) OpenLink(ctx context.Context, action, business string) (Link, error) {
	var la *LinkAction
	for i := range LinkActions {
		if LinkActions[i].Name == action {
			la = &LinkActions[i]
		}
	}
	if la == nil {
		return Link{}, models.Errorf(models.CodeInvalidArgument, "There is no link-only tool %q.", action).WithField("name")
	}
	var u string
	if la.PerBusiness {
		_, ac, err := s.resolve(ctx, business)
		if err != nil {
			return Link{}, err
		}
		u = s.dashboardURL(ac.Company)
	} else {
		v, err := s.account(ctx)
		if err != nil {
			return Link{}, err
		}
		u = s.Billing.DashboardURL(v.ID)
	}
	return Link{Action: "open", URL: u + "&action=" + url.QueryEscape(action), Note: la.Note}, nil
}

// CallAgentTool runs one of the agents' tools on the business, as the
// user: each tool's use case keeps its own rules and limits (connector
// calls count on the business's own counters) and takes the business as
// authorized here (no second authorization step). A billable tool
// (send_email, web_research, generate_image) is paid by its use case
// under the one rule of billable acts (billing.PayForAct): its price is
// held before the effect — an account that cannot pay, or whose plan
// refuses paid work, gets the refusal and no effect — and charged as
// TOOL_USAGE once the call succeeded.
//
// idempotencyKey ("" for none) names the call (service.RequestCall): the
// same key sent again for the same tool and business is the same call —
// a keyed tool (agenttools.Keyed) answers the effect it made instead of
// repeating it, and a billable one is not paid again.
func (s *Service) CallAgentTool(ctx context.Context, business, name, idempotencyKey string, args json.RawMessage) (json.RawMessage, error) {
	ctx, ac, err := s.resolve(ctx, business)
	if err != nil {
		return nil, err
	}
	if idempotencyKey != "" {
		call, err := service.RequestCall(ac.ID, name, idempotencyKey, IdempotencyKeyArgument)
		if err != nil {
			return nil, err
		}
		ctx = service.WithCall(ctx, call)
	}
	return s.Tools.Call(ctx, ac.ID, name, args)
}

// IdempotencyKeyArgument is the optional argument of the keyed agents'
// tools in the connector (agenttools.Keyed).
const IdempotencyKeyArgument = "idempotency_key"

// AgentTools are the agents' tools the connector offers (the control
// tools the turn handles itself, like ask_question, are left out).
func (s *Service) AgentTools() []models.ToolSpec {
	var out []models.ToolSpec
	for _, t := range s.Tools.Specs() {
		if !s.Tools.IsControl(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// ErrorBody renders a refusal as the connector's tool error, {error,
// detail, field…}: a failure on the service side (upstream_unavailable,
// internal_error) carries a retry hint.
func ErrorBody(err error) json.RawMessage {
	raw := agenttools.ErrorJSON(err)
	code := models.ErrorCodeOf(err)
	if code != models.CodeUpstreamUnavailable && code != models.CodeInternal {
		return raw
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, ok := m["retry_after_seconds"]; !ok {
		m["retry_after_seconds"] = RetryAfterSeconds
	}
	if b, err := json.Marshal(m); err == nil {
		return b
	}
	return raw
}

// RetryAfterSeconds is the retry hint of a failure on the service side.
const RetryAfterSeconds = 5
