//go:build faults

package mail_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/email"
	mailsvc "holdco/service/mail"
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

// TestFaultSMTPDown (docs/reliability.md, "SMTP down"): with the
// submission server refusing connections, or accepting them and never
// answering, a send answers upstream_unavailable, the message is recorded
// once as failed (never sending, never twice), and nothing is charged.
func TestFaultSMTPDown(t *testing.T) {
	// A port nothing listens on.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedPort := closed.Addr().(*net.TCPAddr).Port
	require.NoError(t, closed.Close())
	// A server that accepts and never says a word.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	for name, port := range map[string]int{"refused": closedPort, "silent": silent.Addr().(*net.TCPAddr).Port} {
		t.Run(name, func(t *testing.T) {
			sender, err := email.NewSMTP(email.SMTPConfig{Host: "127.0.0.1", Port: port, TLS: email.TLSNone, Timeout: 500 * time.Millisecond})
			require.NoError(t, err)
			e := servicetest.New(t)
			e.Svc = e.NewServices(t, usecases.Options{MailSender: sender})
			ada, c := company(t, e, "ada@example.com", "Acme")
			before, err := e.Svc.Billing(ada, c.ConglomerateID)
			require.NoError(t, err)

			_, err = e.Svc.Mail.Send(ada, c.ID, mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: "Hello"})
			var de *models.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, models.CodeUpstreamUnavailable, de.Code)

			page, err := e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{})
			require.NoError(t, err)
			require.Len(t, page.Emails, 1, "recorded once")
			assert.Equal(t, models.EmailFailed, page.Emails[0].Delivery)
			after, err := e.Svc.Billing(ada, c.ConglomerateID)
			require.NoError(t, err)
			assert.Equal(t, before.Credits.Balance, after.Credits.Balance, "a message that was not sent is not charged")
		})
	}
}
