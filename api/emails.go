package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service"
	"holdco/service/mail"
)

// EmailSummaryResponse is a message in the inbox list (without its body).
type EmailSummaryResponse struct {
	ID        string     `json:"id" format:"uuid"`
	Direction string     `json:"direction" enum:"inbound,outbound"`
	Delivery  string     `json:"delivery" enum:"received,sending,sent,failed,unknown" doc:"received for inbound messages; sending, sent or failed for outbound ones; unknown when the sending process stopped before the provider answered (the message may have gone out; it is not resent)."`
	From      string     `json:"from"`
	To        string     `json:"to"`
	ReplyTo   string     `json:"reply_to" doc:"Empty when not set."`
	Subject   string     `json:"subject"`
	BodyState string     `json:"body_state" enum:"present,missing" doc:"missing: the provider did not deliver the body; the admin backfill fetches it again."`
	Read      bool       `json:"read"`
	ReadAt    *time.Time `json:"read_at" doc:"When the message was first opened; sent messages are read when sent."`
	CreatedAt time.Time  `json:"created_at" doc:"When it was received or sent."`
}

// EmailResponse is one message with its body.
type EmailResponse struct {
	EmailSummaryResponse
	CompanyID string `json:"company_id" format:"uuid"`
	Text      string `json:"text" doc:"Plain-text body; empty when body_state is missing."`
	HTML      string `json:"html" doc:"HTML body as received (inbound only; never rendered by holdco). Sanitize before display."`
}

// EmailCursorResponse continues the inbox after the last message of a page.
type EmailCursorResponse struct {
	Before   time.Time `json:"before"`
	BeforeID string    `json:"before_id" format:"uuid"`
}

// EmailListResponse is a page of a company's inbox, newest first.
type EmailListResponse struct {
	Address string                 `json:"address" format:"email" doc:"The company's inbox address: <handle>@<mail domain>. It receives mail and sends from it."`
	Emails  []EmailSummaryResponse `json:"emails"`
	Next    *EmailCursorResponse   `json:"next" doc:"Pass as before and before_id for the next page; null on the last page."`
}

// SendEmailRequest sends a message from the company's inbox address.
type SendEmailRequest struct {
	To      string `json:"to" minLength:"3" maxLength:"320" doc:"One recipient: jane@example.com or Jane <jane@example.com>."`
	Subject string `json:"subject" minLength:"1" maxLength:"250" doc:"One line, 1 to 250 characters."`
	Text    string `json:"text" minLength:"1" multiline:"true" doc:"Plain text, at most 100000 bytes of UTF-8 (413 above); tab and line breaks allowed, other control characters refused."`
	ReplyTo string `json:"reply_to,omitempty" maxLength:"320" doc:"Optional Reply-To address."`
}

// InboundEmailResponse acknowledges an inbound delivery.
type InboundEmailResponse struct {
	Received  bool   `json:"received"`
	EmailID   string `json:"email_id,omitempty" doc:"The stored message; absent when dropped."`
	Duplicate bool   `json:"duplicate" doc:"This provider message id was delivered before; nothing was stored again."`
	Dropped   bool   `json:"dropped" doc:"No live company has the recipient address: accepted and dropped."`
}

// BackfillEmailContentRequest bounds one backfill run.
type BackfillEmailContentRequest struct {
	Limit int `json:"limit,omitempty" minimum:"1" maximum:"5000" doc:"Messages handled in this run, oldest first; default 500."`
}

// BackfillEmailContentResponse sorts every message a run looked at into one
// bucket.
type BackfillEmailContentResponse struct {
	Updated    int      `json:"updated" doc:"Bodies the provider gave and this run stored."`
	Empty      int      `json:"empty" doc:"The provider returned no body; the message stays missing and the next run asks again."`
	Skipped    int      `json:"skipped" doc:"Another run stored the body first (runs may overlap); not a failure."`
	Failed     int      `json:"failed" doc:"The provider could not be asked (logged); retried on the next run."`
	UpdatedIDs []string `json:"updated_ids"`
	EmptyIDs   []string `json:"empty_ids"`
	SkippedIDs []string `json:"skipped_ids"`
	FailedIDs  []string `json:"failed_ids"`
}

type emailHandlers struct{ svc *mail.Service }

// emailBodyLimit leaves room for JSON escaping around the largest text, so
// the size rule (413 with the numbers) answers, not the parser.
const emailBodyLimit = 8 * mail.MaxTextBytes

func registerEmailRoutes(api huma.API, h *emailHandlers) {
	tags := []string{"email"}
	huma.Register(api, huma.Operation{OperationID: "list-emails", Method: http.MethodGet, Path: "/companies/{company_id}/emails",
		Tags: tags, Summary: "The company's inbox, newest first", Security: bearerSecurity,
		Description: "Received and sent messages without their bodies, with the inbox address. Messages with equal timestamps are ordered by id. " +
			"`before` alone lists messages strictly older than that instant; `before` with `before_id` (both from `next`) continues exactly after the previous page."}, h.list)
	huma.Register(api, huma.Operation{OperationID: "get-email", Method: http.MethodGet, Path: "/companies/{company_id}/emails/{email_id}",
		Tags: tags, Summary: "One message with its body; marks it read", Security: bearerSecurity,
		Description: "404 when the company has no such message (another company's message included)."}, h.get)
	huma.Register(api, huma.Operation{OperationID: "send-email", Method: http.MethodPost, Path: "/companies/{company_id}/emails",
		Tags: tags, Summary: "Send a message from the company's address", Security: bearerSecurity, DefaultStatus: http.StatusCreated, MaxBodyBytes: emailBodyLimit,
		Description: "One recipient, one-line subject, plain text. 422 for a bad address, a line break or control character in a header value; " +
			"413 for a text over 100000 bytes; 429 rate_limited after the company's daily send limit (HOLDCO_MAIL_DAILY_SEND_LIMIT, default 50 per UTC day; refused attempts count); " +
			"502 upstream_unavailable when the provider refuses (the message is kept as failed, nothing charged). " +
			"A sent message costs 1 credit, held before sending and charged as TOOL_USAGE once sent (run_id: the message's id): " +
			"402 insufficient_credits (balance, needed, links) or the plan's refusal, and nothing is stored or sent, when the account cannot pay. " +
			"With an `Idempotency-Key`, a retry of the same send (same company, same key) answers the first message: one message, one charge."}, h.send)
	huma.Register(api, huma.Operation{OperationID: "inbound-email-webhook", Method: http.MethodPost, Path: "/webhooks/email/inbound",
		Tags: tags, Summary: "Inbound mail from the provider", MaxBodyBytes: mail.MaxInboundBytes,
		Description: "Signed: `" + mail.TimestampHeader + "` (Unix seconds, within 5 minutes of holdco's clock) and `" + mail.SignatureHeader +
			"` = `v1=` hex HMAC-SHA256 of `<timestamp>.<body>` under HOLDCO_MAIL_INBOUND_SECRET; 401 without detail when it does not verify, 404 when no secret is configured. " +
			"Body: `{message_id, recipient, from, subject, text?, html?}` (see docs/email.md). Idempotent by message_id per company. " +
			"A recipient that is no live company's inbox is accepted and dropped (`dropped: true`)."}, h.inbound)
	huma.Register(api, huma.Operation{OperationID: "admin-backfill-email-content", Method: http.MethodPost, Path: "/admin/backfill-email-content",
		Tags: []string{"admin"}, Summary: "Fetch missing email bodies again", Security: bearerSecurity, Metadata: map[string]any{adminOnly: true},
		Description: "Asks the provider for the bodies of received messages stored without one and answers the buckets updated, empty, skipped (and failed), " +
			"each a count with the ids. Safe to run concurrently: a body is stored only while the message is still missing. 409 when the provider cannot hand out bodies."}, h.backfill)
}

func toEmailSummary(e models.Email) EmailSummaryResponse {
	return EmailSummaryResponse{ID: e.ID, Direction: string(e.Direction), Delivery: string(e.Delivery), From: e.FromAddress, To: e.ToAddress,
		ReplyTo: e.ReplyTo, Subject: e.Subject, BodyState: string(e.BodyState), Read: e.ReadAt != nil, ReadAt: e.ReadAt, CreatedAt: e.CreatedAt}
}

func toEmail(e models.Email) EmailResponse {
	return EmailResponse{EmailSummaryResponse: toEmailSummary(e), CompanyID: e.CompanyID, Text: e.TextBody, HTML: e.HTMLBody}
}

type listEmailsInput struct {
	CompanyID string    `path:"company_id" format:"uuid"`
	Limit     int       `query:"limit" minimum:"1" maximum:"100" default:"50"`
	Before    time.Time `query:"before" required:"false" doc:"RFC 3339 date-time."`
	BeforeID  string    `query:"before_id" format:"uuid" required:"false"`
	Direction string    `query:"direction" enum:"inbound,outbound" required:"false" doc:"Only received (inbound) or sent (outbound) messages; both when absent."`
}

type listEmailsOutput struct{ Body EmailListResponse }

func (h *emailHandlers) list(ctx context.Context, in *listEmailsInput) (*listEmailsOutput, error) {
	page, err := h.svc.List(ctx, in.CompanyID, mail.ListInput{Limit: in.Limit, Before: in.Before, BeforeID: in.BeforeID, Direction: in.Direction})
	if err != nil {
		return nil, err
	}
	out := &listEmailsOutput{Body: EmailListResponse{Address: page.Address, Emails: make([]EmailSummaryResponse, 0, len(page.Emails))}}
	for _, e := range page.Emails {
		out.Body.Emails = append(out.Body.Emails, toEmailSummary(e))
	}
	if page.Next != nil {
		out.Body.Next = &EmailCursorResponse{Before: page.Next.CreatedAt, BeforeID: page.Next.ID}
	}
	return out, nil
}

type emailIDInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	EmailID   string `path:"email_id" format:"uuid"`
}

type emailOutput struct{ Body EmailResponse }

func (h *emailHandlers) get(ctx context.Context, in *emailIDInput) (*emailOutput, error) {
	e, err := h.svc.Get(ctx, in.CompanyID, in.EmailID)
	if err != nil {
		return nil, err
	}
	return &emailOutput{Body: toEmail(e)}, nil
}

type sendEmailInput struct {
	CompanyID      string `path:"company_id" format:"uuid"`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Optional: a key of the client's choice naming this send (a UUID is a good one). Sent again with the same key, the request answers the message the first one sent (201) without sending it again or charging again."`
	Body           SendEmailRequest
}

func (h *emailHandlers) send(ctx context.Context, in *sendEmailInput) (*emailOutput, error) {
	if in.IdempotencyKey != "" {
		call, err := service.RequestCall(in.CompanyID, "send_email", in.IdempotencyKey, "Idempotency-Key")
		if err != nil {
			return nil, err
		}
		ctx = service.WithCall(ctx, call)
	}
	e, err := h.svc.Send(ctx, in.CompanyID, mail.SendInput{To: in.Body.To, Subject: in.Body.Subject, Text: in.Body.Text, ReplyTo: in.Body.ReplyTo})
	if err != nil {
		return nil, err
	}
	return &emailOutput{Body: toEmail(e)}, nil
}

type inboundEmailInput struct {
	Timestamp string `header:"X-Holdco-Timestamp"`
	Signature string `header:"X-Holdco-Signature"`
	RawBody   []byte
}

type inboundEmailOutput struct{ Body InboundEmailResponse }

func (h *emailHandlers) inbound(ctx context.Context, in *inboundEmailInput) (*inboundEmailOutput, error) {
	res, err := h.svc.ReceiveInbound(ctx, mail.InboundDelivery{Body: in.RawBody, Timestamp: in.Timestamp, Signature: in.Signature})
	if err != nil {
		return nil, err
	}
	return &inboundEmailOutput{Body: InboundEmailResponse{Received: true, EmailID: res.EmailID, Duplicate: res.Duplicate, Dropped: res.Dropped}}, nil
}

type backfillEmailInput struct {
	Body *BackfillEmailContentRequest `required:"false"`
}

type backfillEmailOutput struct{ Body BackfillEmailContentResponse }

func (h *emailHandlers) backfill(ctx context.Context, in *backfillEmailInput) (*backfillEmailOutput, error) {
	var limit int
	if in.Body != nil {
		limit = in.Body.Limit
	}
	r, err := h.svc.BackfillContent(ctx, mail.BackfillInput{Limit: limit})
	if err != nil {
		return nil, err
	}
	return &backfillEmailOutput{Body: BackfillEmailContentResponse{Updated: len(r.Updated), Empty: len(r.Empty), Skipped: len(r.Skipped), Failed: len(r.Failed),
		UpdatedIDs: r.Updated, EmptyIDs: r.Empty, SkippedIDs: r.Skipped, FailedIDs: r.Failed}}, nil
}
