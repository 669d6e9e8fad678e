package mail

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"holdco/models"
)

// The inbound webhook's signature: the provider (or the local tooling)
// sends the Unix time in seconds in TimestampHeader and
// `v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>` in
// SignatureHeader (several comma-separated v1 values are allowed while a
// secret is rotated). A timestamp more than SignatureTolerance away from
// holdco's clock is refused, so a captured delivery cannot be replayed
// later.
const (
	TimestampHeader    = "X-Holdco-Timestamp"
	SignatureHeader    = "X-Holdco-Signature"
	SignatureTolerance = 5 * time.Minute
)

// Sign computes the signature header value of body sent at ts; the local
// tooling and tests use it, and it documents the scheme.
func Sign(secret []byte, ts time.Time, body []byte) (timestamp, signature string) {
	timestamp = strconv.FormatInt(ts.Unix(), 10)
	return timestamp, "v1=" + hex.EncodeToString(mac(secret, timestamp, body))
}

func mac(secret []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte("."))
	m.Write(body)
	return m.Sum(nil)
}

// InboundDelivery is one request of the inbound webhook, as received.
type InboundDelivery struct {
	Body      []byte
	Timestamp string
	Signature string
}

// InboundMessage is the webhook's JSON body (documented in docs/email.md).
// A body the provider did not deliver is absent or null: the message is
// stored with body state `missing` and the admin backfill fetches it later.
type InboundMessage struct {
	MessageID string  `json:"message_id"`
	Recipient string  `json:"recipient"`
	From      string  `json:"from"`
	Subject   string  `json:"subject"`
	Text      *string `json:"text"`
	HTML      *string `json:"html"`
}

// InboundResult is the webhook's answer. Unknown recipients are accepted
// and dropped (Dropped): telling them apart would let anyone holding a
// signed delivery probe which handles exist, and the provider would retry
// a refusal forever.
type InboundResult struct {
	EmailID   string // "" when dropped
	Duplicate bool   // delivered before: nothing was stored again
	Dropped   bool   // no live company has this address
}

// errBadSignature is the one answer for every signature failure, so the
// response tells nothing about which part failed.
func errBadSignature() *models.Error {
	return models.Errorf(models.CodeUnauthenticated, "The delivery's signature does not verify.")
}

// verify checks the signature and the timestamp's freshness in constant
// time.
func (s *Service) verify(d InboundDelivery) error {
	ts, err := strconv.ParseInt(strings.TrimSpace(d.Timestamp), 10, 64)
	if err != nil {
		return errBadSignature()
	}
	if age := s.core.Now().Sub(time.Unix(ts, 0)); age > SignatureTolerance || age < -SignatureTolerance {
		return errBadSignature()
	}
	want := mac(s.cfg.InboundSecret, strings.TrimSpace(d.Timestamp), d.Body)
	ok := false
	for _, part := range strings.Split(d.Signature, ",") {
		v, found := strings.CutPrefix(strings.TrimSpace(part), "v1=")
		if !found {
			continue
		}
		got, err := hex.DecodeString(v)
		if err == nil && hmac.Equal(got, want) {
			ok = true
		}
	}
	if !ok {
		return errBadSignature()
	}
	return nil
}

// ReceiveInbound stores a message delivered by the inbound webhook, once
// per provider message id (a redelivery answers Duplicate). The signature
// is checked before anything in the body is read.
func (s *Service) ReceiveInbound(ctx context.Context, d InboundDelivery) (InboundResult, error) {
	if len(s.cfg.InboundSecret) == 0 {
		return InboundResult{}, models.Errorf(models.CodeNotFound, "Inbound email is not configured.")
	}
	if len(d.Body) > MaxInboundBytes {
		return InboundResult{}, models.Errorf(models.CodeTooLarge, "The delivery has %d bytes; at most %d are accepted.", len(d.Body), MaxInboundBytes).
			With("size", len(d.Body)).With("limit", MaxInboundBytes)
	}
	if err := s.verify(d); err != nil {
		return InboundResult{}, err
	}
	var in InboundMessage
	dec := json.NewDecoder(bytes.NewReader(d.Body))
	if err := dec.Decode(&in); err != nil {
		return InboundResult{}, models.Errorf(models.CodeInvalidArgument, "The delivery is not the inbound message JSON object.")
	}
	row, handle, err := s.inboundRow(in)
	if err != nil {
		return InboundResult{}, err
	}
	if handle == "" {
		s.core.Logger().Info("inbound email dropped: the recipient is no inbox of this domain")
		return InboundResult{Dropped: true}, nil
	}
	stored, delivered, err := s.core.Store().Sales().DeliverInboundEmail(ctx, handle, row, models.ActivityInput{
		Kind: models.ActivityEmailReceived, Actor: models.ActorCustomer, Summary: "Email received", Data: map[string]any{"body_state": row.BodyState}})
	if errors.Is(err, models.ErrNotFound) {
		s.core.Logger().Info("inbound email dropped: no live company has the recipient address")
		return InboundResult{Dropped: true}, nil
	}
	if err != nil {
		return InboundResult{}, err
	}
	if delivered {
		s.core.Logger().Info("inbound email stored", "company_id", stored.CompanyID, "email_id", stored.ID, "body_state", stored.BodyState)
	}
	return InboundResult{EmailID: stored.ID, Duplicate: !delivered}, nil
}

// inboundRow checks a delivered message and returns its row and the handle
// its recipient names; handle is "" when the recipient is not an address of
// the mail domain.
func (s *Service) inboundRow(in InboundMessage) (models.Email, string, error) {
	if err := headerText("message_id", in.MessageID, MaxMessageIDChars); err != nil {
		return models.Email{}, "", err
	}
	if strings.TrimSpace(in.MessageID) == "" {
		return models.Email{}, "", models.Errorf(models.CodeInvalidArgument, "message_id is required.").WithField("message_id")
	}
	rcpt, err := address("recipient", in.Recipient)
	if err != nil {
		return models.Email{}, "", err
	}
	from, err := address("from", in.From)
	if err != nil {
		return models.Email{}, "", err
	}
	if err := headerText("subject", in.Subject, MaxInboundSubjectChars); err != nil {
		return models.Email{}, "", err
	}
	row := models.Email{ProviderMessageID: in.MessageID, FromAddress: from, ToAddress: strings.ToLower(rcpt), Subject: in.Subject,
		BodyState: models.EmailBodyMissing, CreatedAt: s.core.Now()}
	if in.Text != nil || in.HTML != nil {
		row.BodyState = models.EmailBodyPresent
		if in.Text != nil {
			row.TextBody = cleanBody(*in.Text)
		}
		if in.HTML != nil {
			row.HTMLBody = cleanBody(*in.HTML)
		}
	}
	local, domain, _ := strings.Cut(row.ToAddress, "@")
	local, _, _ = strings.Cut(local, "+") // acme+orders@… is acme's (subaddressing)
	if domain != s.cfg.Domain || !models.ValidHandle(local) {
		return row, "", nil
	}
	return row, local, nil
}
