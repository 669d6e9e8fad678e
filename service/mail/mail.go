// Package mail is the company inbox: every company receives mail at
// <handle>@<mail domain> and sends from that address. REST, the agents'
// send_email/read_email tools and the connector call these use cases with
// typed inputs, so each rule (address and size checks, header injection,
// the daily send limit, the inbound signature) is written once here. The
// provider is reached through Sender and BodyFetcher; app/ wires an adapter
// of providers/email in.
package mail

import (
	"context"
	"strings"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
)

// Sender hands a validated message to the mail provider. Its errors carry
// no address, subject or body (they are logged).
type Sender interface {
	Send(ctx context.Context, m models.OutgoingEmail) error
}

// BodyFetcher asks the provider again for the body of a received message
// that the inbound delivery left out. An empty body (and no error) means
// the provider has none to give.
type BodyFetcher interface {
	FetchBody(ctx context.Context, providerMessageID string) (models.EmailBody, error)
}

// Limits of the inbox, documented in docs/email.md.
const (
	// DefaultDailySendLimit is how many messages a company may send per
	// UTC day when the setting does not say otherwise (attempts that the
	// provider refused count too).
	DefaultDailySendLimit = 50
	MaxSubjectChars       = 250     // a sent message's subject
	MaxTextBytes          = 100_000 // a sent message's plain-text body
	MaxAddressChars       = 320     // an address (RFC 5321: 64 + @ + 255)
	// MaxInboundSubjectChars is the longest subject accepted from the
	// inbound webhook (one RFC 5322 line).
	MaxInboundSubjectChars = 998
	// MaxInboundBytes is the largest inbound webhook request body (the
	// JSON with both bodies); the REST edge refuses more with 413.
	MaxInboundBytes   = 2 << 20
	MaxMessageIDChars = 255
	DefaultListLimit  = 50
	MaxListLimit      = 100
	// DefaultBackfillBatch is how many missing bodies one backfill run
	// handles; MaxBackfillBatch bounds what a caller may ask for.
	DefaultBackfillBatch = 500
	MaxBackfillBatch     = 5000
)

// DefaultDomain is the mail domain when none is configured.
const DefaultDomain = "mail.localhost"

// Config is the inbox's settings.
type Config struct {
	// Domain is the mail domain: a company's address is <handle>@Domain.
	Domain string
	// EnvelopeFrom is the SMTP envelope sender (bounces) of every sent
	// message; empty is the company's address.
	EnvelopeFrom string
	// InboundSecret signs inbound webhook deliveries; empty disables the
	// inbound endpoint (404).
	InboundSecret []byte
	// DailySendLimit is the per-company send limit per UTC day; 0 is
	// DefaultDailySendLimit.
	DailySendLimit int64
}

// Service is the inbox use cases.
type Service struct {
	core   *service.Core
	cfg    Config
	sender Sender
	bodies BodyFetcher
	// billing charges a sent message (SendCredits) before it is sent.
	billing *billing.Service
}

// SendCredits is what a sent message costs, whoever sends it (REST, an
// agent's send_email, the connector): billing's price of send_email.
var SendCredits = billing.ToolCredits("send_email")

// New builds the inbox on the core. sender may be nil when no provider is
// configured (Send answers upstream_unavailable); bodies may be nil when the provider
// cannot hand bodies out again (the backfill then answers conflict).
func New(core *service.Core, bill *billing.Service, cfg Config, sender Sender, bodies BodyFetcher) *Service {
	cfg.Domain = strings.ToLower(strings.TrimSpace(cfg.Domain))
	if cfg.Domain == "" {
		cfg.Domain = DefaultDomain
	}
	if cfg.DailySendLimit <= 0 {
		cfg.DailySendLimit = DefaultDailySendLimit
	}
	return &Service{core: core, cfg: cfg, sender: sender, bodies: bodies, billing: bill}
}

// Address is the inbox address of the company with this handle.
func (s *Service) Address(handle string) string { return handle + "@" + s.cfg.Domain }

// Domain is the configured mail domain.
func (s *Service) Domain() string { return s.cfg.Domain }

// DailySendLimit is the per-company send limit per UTC day.
func (s *Service) DailySendLimit() int64 { return s.cfg.DailySendLimit }
