package app

import (
	"fmt"
	"path/filepath"

	"holdco/config"
	"holdco/providers/email"
	"holdco/service/mail"
)

// mailOptions builds the inbox settings and its provider from the Mail
// section: the local mailbox under the data dir (sent MIME and received
// bodies, offline) or an SMTP submission server, which cannot hand bodies
// out again (the admin backfill then answers conflict).
func mailOptions(cfg config.Config) (mail.Config, mail.Sender, mail.BodyFetcher, error) {
	mc := cfg.Mail
	settings := mail.Config{Domain: mc.Domain, EnvelopeFrom: mc.From, DailySendLimit: mc.DailySendLimit}
	if mc.InboundSecret != "" {
		settings.InboundSecret = []byte(mc.InboundSecret)
	}
	switch mc.Backend {
	case config.MailSMTP:
		snd, err := email.NewSMTP(email.SMTPConfig{Host: mc.SMTPHost, Port: mc.SMTPPort, Username: mc.SMTPUser, Password: mc.SMTPPassword, TLS: mc.SMTPTLS})
		if err != nil {
			return settings, nil, nil, fmt.Errorf("HOLDCO_MAIL_SMTP_HOST: %w", err)
		}
		return settings, snd, nil, nil
	default:
		box, err := email.NewLocal(filepath.Join(cfg.DataDir, "mail"))
		if err != nil {
			return settings, nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
		}
		return settings, box, box, nil
	}
}
