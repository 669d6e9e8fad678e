package mail

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// SendInput is a message a company sends from its inbox address.
type SendInput struct {
	To      string // one recipient: `jane@example.com` or `Jane <jane@example.com>`
	Subject string // 1 to MaxSubjectChars characters, one line
	Text    string // plain text, 1 to MaxTextBytes bytes
	ReplyTo string // optional
}

// checked is a SendInput that passed the rules, addresses reduced to their
// bare form.
type checked struct {
	to, replyTo, subject, text string
}

func (in SendInput) check() (checked, error) {
	var c checked
	var err *models.Error
	if c.to, err = address("to", in.To); err != nil {
		return c, err
	}
	if in.ReplyTo != "" {
		if c.replyTo, err = address("reply_to", in.ReplyTo); err != nil {
			return c, err
		}
	}
	if err = headerText("subject", in.Subject, MaxSubjectChars); err != nil {
		return c, err
	}
	if in.Subject == "" {
		return c, models.Errorf(models.CodeInvalidArgument, "subject is required.").WithField("subject")
	}
	if len(in.Text) > MaxTextBytes {
		return c, models.Errorf(models.CodeTooLarge, "The text has %d bytes; at most %d are allowed.", len(in.Text), MaxTextBytes).
			WithField("text").With("size", len(in.Text)).With("limit", MaxTextBytes)
	}
	if err = bodyText("text", in.Text); err != nil {
		return c, err
	}
	if in.Text == "" {
		return c, models.Errorf(models.CodeInvalidArgument, "text is required.").WithField("text")
	}
	c.subject, c.text = in.Subject, in.Text
	return c, nil
}

// Send sends a message from the company's inbox address, paid: it costs
// SendCredits, held before the provider is called and charged once the
// message is sent (billing.PayForAct; an account that cannot pay sends
// nothing: insufficient_credits). The message is recorded (state
// `sending`) before the provider is called, so the daily limit counts it
// even if the process stops half-way; it ends `sent`, or `failed` with
// upstream_unavailable when the provider refused it (nothing charged).
// The limit is DailySendLimit messages per company per UTC day (429
// rate_limited with the limit and when it resets).
//
// A call (service.Call in ctx: an agent's tool call, or a client's
// idempotency key) stores the message under an id derived from the call's
// key and is charged under that key: the same call made again after a
// crash or a lost answer answers the message already sent (or sending,
// or of unknown outcome) without sending it again or paying twice; one
// the provider refused is tried again. A send without a call is a new
// message, charged with the message's id as run_id.
func (s *Service) Send(ctx context.Context, companyID string, in SendInput) (models.Email, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.Email{}, err
	}
	c, err := in.check()
	if err != nil {
		return models.Email{}, err
	}
	if s.sender == nil {
		return models.Email{}, models.Errorf(models.CodeUpstreamUnavailable, "No mail provider is configured; nothing was sent.")
	}
	id := service.EffectID(ctx, "email")
	if s.billing == nil {
		return s.send(ctx, ac, c, id)
	}
	var row models.Email
	err = s.billing.PayForAct(ctx, ac, "send_email", id, func(ctx context.Context) error {
		var err error
		row, err = s.send(ctx, ac, c, id)
		return err
	})
	return row, err
}

// send records the message under id and hands it to the provider.
func (s *Service) send(ctx context.Context, ac service.AuthorizedCompany, c checked, id string) (models.Email, error) {
	from := s.Address(ac.Handle)
	now := s.core.Now()
	day := now.UTC().Truncate(24 * time.Hour)
	row, err := s.core.Store().Sales().ReserveOutgoingEmail(ctx, ac.Scope, models.Email{
		ID: id, ProviderMessageID: uuid.NewSHA1(messageIDNamespace, []byte(id)).String() + "@" + s.cfg.Domain,
		CreatedAt: now, FromAddress: from, ToAddress: c.to, ReplyTo: c.replyTo, Subject: c.subject, TextBody: c.text,
	}, day, s.cfg.DailySendLimit)
	if errors.Is(err, store.ErrEmailExists) {
		// The same call, made again: its message is not sent twice.
		return row, nil
	}
	if errors.Is(err, store.ErrSendLimit) {
		resets := day.Add(24 * time.Hour)
		return models.Email{}, models.Errorf(models.CodeRateLimited, "This company has sent its %d messages for today; sending resumes at %s.",
			s.cfg.DailySendLimit, resets.Format(time.RFC3339)).With("limit", s.cfg.DailySendLimit).With("resets_at", resets)
	}
	if err != nil {
		return models.Email{}, err
	}
	// A message tried again keeps what was stored first.
	sendErr := s.sender.Send(ctx, models.OutgoingEmail{MessageID: row.ProviderMessageID, FromName: ac.Name, From: row.FromAddress,
		EnvelopeFrom: s.cfg.EnvelopeFrom, To: row.ToAddress, ReplyTo: row.ReplyTo, Subject: row.Subject, Text: row.TextBody})
	// The outcome is recorded even when the caller has gone away.
	record := context.WithoutCancel(ctx)
	if sendErr != nil {
		// The provider's errors carry no address or content.
		s.core.Logger().Warn("email send failed", "company_id", ac.ID, "email_id", row.ID, "error", sendErr)
		if err := s.core.Store().Sales().SetEmailDelivery(record, ac.Scope, row.ID, models.EmailFailed, nil); err != nil {
			return models.Email{}, err
		}
		return models.Email{}, models.Errorf(models.CodeUpstreamUnavailable, "The mail provider did not accept the message; it was not sent (email %s).", row.ID).
			With("email_id", row.ID)
	}
	if err := s.core.Store().Sales().SetEmailDelivery(record, ac.Scope, row.ID, models.EmailSent, &models.ActivityInput{
		Kind: models.ActivityEmailSent, Actor: service.ActorOf(ctx), Summary: "Email sent"}); err != nil {
		return models.Email{}, err
	}
	row.Delivery = models.EmailSent
	return row, nil
}

// messageIDNamespace derives a message's Message-ID from its row id.
var messageIDNamespace = uuid.MustParse("a3d1c7e2-5f4b-4e8a-9c61-0b7d2f8e4a55")
