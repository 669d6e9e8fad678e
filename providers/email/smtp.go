package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	gomail "github.com/wneessen/go-mail"

	"holdco/models"
)

// TLS modes of the SMTP connection.
const (
	TLSStartTLS = "starttls" // STARTTLS required (submission port 587)
	TLSImplicit = "tls"      // TLS from the first byte (port 465)
	TLSNone     = "none"     // plain text: a relay on the local network only
)

// SMTPConfig is the submission server holdco sends through.
type SMTPConfig struct {
	Host     string
	Port     int
	Username string // empty: no authentication
	Password string
	TLS      string // TLSStartTLS, TLSImplicit or TLSNone
	// TLSConfig overrides the TLS settings (tests trust their own CA);
	// nil verifies the server against the system roots for Host.
	TLSConfig *tls.Config
	Timeout   time.Duration // per connection; 0 is 30 seconds
}

// SMTP sends each message on its own connection through a submission
// server.
type SMTP struct {
	cfg SMTPConfig
}

// NewSMTP checks the settings.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	if cfg.Host == "" || cfg.Port <= 0 {
		return nil, fmt.Errorf("email: smtp: host and port are required")
	}
	switch cfg.TLS {
	case TLSStartTLS, TLSImplicit, TLSNone:
	default:
		return nil, fmt.Errorf("email: smtp: TLS mode %q is not one of starttls, tls, none", cfg.TLS)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	return &SMTP{cfg: cfg}, nil
}

// Send delivers m to the submission server. The error never carries the
// message's addresses or content.
func (s *SMTP) Send(ctx context.Context, m models.OutgoingEmail) error {
	msg, err := buildMessage(m)
	if err != nil {
		return err
	}
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.cfg.Timeout)}
	switch s.cfg.TLS {
	case TLSStartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if s.cfg.TLSConfig != nil {
		opts = append(opts, gomail.WithTLSConfig(s.cfg.TLSConfig))
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	c, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("email: smtp client: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return redact(err)
	}
	return nil
}

// redact keeps what an operator needs from a send failure (the step, the
// SMTP status codes, whether it is temporary) and drops the server's text,
// which can echo the recipient's address.
func redact(err error) error {
	var se *gomail.SendError
	if errors.As(err, &se) {
		return fmt.Errorf("email: smtp send: %s (smtp code %d, enhanced %q, temporary %v)", se.Reason, se.ErrorCode(), se.EnhancedStatusCode(), se.IsTemp())
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return fmt.Errorf("email: smtp send: network error (timeout %v)", ne.Timeout())
	}
	return errors.New("email: smtp send failed")
}
