// Package email sends companies' messages and keeps the bodies of received
// ones: an SMTP sender (go-mail) for production and a local mailbox under
// the data directory that works offline. Both link only models; the use
// cases in service/mail define the interfaces they need.
package email

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"

	gomail "github.com/wneessen/go-mail"

	"holdco/models"
)

// ErrHeaderInjection is returned for a header value holding a line break:
// the use cases refuse those first, the providers check again so that no
// caller can add a header by accident.
var ErrHeaderInjection = errors.New("email: line break in a header value")

// buildMessage turns a validated message into MIME. Addresses are parsed
// again (net/mail) and every header value is checked for CR and LF.
func buildMessage(m models.OutgoingEmail) (*gomail.Msg, error) {
	for _, v := range []string{m.MessageID, m.FromName, m.From, m.EnvelopeFrom, m.To, m.ReplyTo, m.Subject} {
		if strings.ContainsAny(v, "\r\n") {
			return nil, ErrHeaderInjection
		}
	}
	if m.MessageID == "" || strings.ContainsAny(m.MessageID, "<> ") {
		return nil, errors.New("email: message id missing or malformed")
	}
	from, err := mail.ParseAddress(m.From)
	if err != nil {
		return nil, fmt.Errorf("email: from address: %w", err)
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("email: to address: %w", err)
	}
	msg := gomail.NewMsg()
	msg.FromMailAddress(&mail.Address{Name: m.FromName, Address: from.Address})
	msg.ToMailAddress(to)
	if m.EnvelopeFrom != "" {
		env, err := mail.ParseAddress(m.EnvelopeFrom)
		if err != nil {
			return nil, fmt.Errorf("email: envelope sender: %w", err)
		}
		msg.EnvelopeFromMailAddress(env)
	}
	if m.ReplyTo != "" {
		rt, err := mail.ParseAddress(m.ReplyTo)
		if err != nil {
			return nil, fmt.Errorf("email: reply-to address: %w", err)
		}
		msg.ReplyToMailAddress(rt)
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(m.MessageID)
	msg.SetDate()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	return msg, nil
}
