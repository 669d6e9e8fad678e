package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/config"
	"holdco/models"
	"holdco/providers/email"
)

func TestMailOptionsPickTheProviderByConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"HOLDCO_DATA_DIR": dir, "HOLDCO_MAIL_DOMAIN": "mail.example.com", "HOLDCO_MAIL_DAILY_SEND_LIMIT": "7",
			"HOLDCO_MAIL_INBOUND_SECRET": "0123456789abcdef0123456789abcdef"}[k]
	})
	require.NoError(t, err)
	settings, sender, bodies, err := mailOptions(cfg)
	require.NoError(t, err)
	assert.Equal(t, "mail.example.com", settings.Domain)
	assert.EqualValues(t, 7, settings.DailySendLimit)
	assert.Equal(t, []byte("0123456789abcdef0123456789abcdef"), settings.InboundSecret)
	require.IsType(t, &email.Local{}, sender)
	require.NotNil(t, bodies)
	_, err = os.Stat(filepath.Join(dir, "mail"))
	assert.True(t, os.IsNotExist(err), "nothing is written before the first message")
	require.NoError(t, sender.Send(context.Background(), models.OutgoingEmail{MessageID: "a@mail.example.com", From: "acme@mail.example.com", To: "jane@example.com", Subject: "s", Text: "t"}))
	_, err = os.Stat(filepath.Join(dir, "mail", "sent"))
	assert.NoError(t, err, "the local mailbox lives under the data dir")

	cfg.Mail.Backend, cfg.Mail.SMTPHost = config.MailSMTP, "smtp.example.com"
	settings, sender, bodies, err = mailOptions(cfg)
	require.NoError(t, err)
	assert.NotEmpty(t, settings.InboundSecret)
	require.IsType(t, &email.SMTP{}, sender)
	assert.Nil(t, bodies, "SMTP cannot hand bodies out again")
}
