package email_test

import (
	"context"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/email"
)

func TestLocalKeepsTheSentMIME(t *testing.T) {
	l, err := email.NewLocal(filepath.Join(t.TempDir(), "mail"))
	require.NoError(t, err)
	require.NoError(t, l.Send(context.Background(), outgoing()))
	raw, err := l.SentMessage("m1.abc@mail.test")
	require.NoError(t, err)
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	require.NoError(t, err)
	assert.Equal(t, "<m1.abc@mail.test>", m.Header.Get("Message-Id"))
	to, err := mail.ParseAddress(m.Header.Get("To"))
	require.NoError(t, err)
	assert.Equal(t, "jane@example.com", to.Address)

	bad := outgoing()
	bad.MessageID, bad.Subject = "m2@mail.test", "x\r\nBcc: victim@example.com"
	require.ErrorIs(t, l.Send(context.Background(), bad), email.ErrHeaderInjection)
	_, err = l.SentMessage("m2@mail.test")
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestLocalAnswersBodyFetchesOffline(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mail")
	l, err := email.NewLocal(dir)
	require.NoError(t, err)
	b, err := l.FetchBody(ctx, "unknown@provider")
	require.NoError(t, err)
	assert.True(t, b.Empty(), "a message the mailbox never received has no body")

	require.NoError(t, l.Receive(ctx, "../../etc/passwd", models.EmailBody{Text: "hello", HTML: "<p>hello</p>"}))
	b, err = l.FetchBody(ctx, "../../etc/passwd")
	require.NoError(t, err)
	assert.Equal(t, models.EmailBody{Text: "hello", HTML: "<p>hello</p>"}, b)

	// A reopened mailbox still has it: the bodies live on disk.
	again, err := email.NewLocal(dir)
	require.NoError(t, err)
	b, err = again.FetchBody(ctx, "../../etc/passwd")
	require.NoError(t, err)
	assert.Equal(t, "hello", b.Text)
}
