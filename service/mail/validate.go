package mail

import (
	"net/mail"
	"strings"
	"unicode/utf8"

	"holdco/models"
)

// Text rules shared by every input of the inbox. REST checks NUL and
// control characters at its edge too; the use cases check again because
// agents and the connector call them directly.

// isControl is a C0 or C1 control character or DEL.
func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// headerText checks a value that becomes (part of) a header: valid UTF-8,
// no control character at all — CR and LF included, so no header can be
// injected — and at most max characters.
func headerText(field, v string, max int) *models.Error {
	if !utf8.ValidString(v) {
		return models.Errorf(models.CodeInvalidArgument, "%s is not valid UTF-8.", field).WithField(field)
	}
	for _, r := range v {
		if r == '\r' || r == '\n' {
			return models.Errorf(models.CodeInvalidArgument, "%s must be one line: a line break would start another header.", field).WithField(field)
		}
		if isControl(r) {
			return models.Errorf(models.CodeInvalidArgument, "%s must not contain control characters.", field).WithField(field)
		}
	}
	if n := utf8.RuneCountInString(v); n > max {
		return models.Errorf(models.CodeInvalidArgument, "%s has %d characters; at most %d are allowed.", field, n, max).WithField(field)
	}
	return nil
}

// bodyText checks a message body: valid UTF-8, no NUL and no control
// character other than tab and line breaks.
func bodyText(field, v string) *models.Error {
	if !utf8.ValidString(v) {
		return models.Errorf(models.CodeInvalidArgument, "%s is not valid UTF-8.", field).WithField(field)
	}
	for _, r := range v {
		if isControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return models.Errorf(models.CodeInvalidArgument, "%s must not contain NUL or control characters other than tab and line breaks.", field).WithField(field)
		}
	}
	return nil
}

// address checks one mailbox (`jane@example.com` or `Jane <jane@example.com>`)
// and returns its bare address. Groups and lists of several recipients are
// refused: a message goes to exactly one recipient.
func address(field, v string) (string, *models.Error) {
	v = strings.TrimSpace(v)
	if err := headerText(field, v, MaxAddressChars); err != nil {
		return "", err
	}
	if v == "" {
		return "", models.Errorf(models.CodeInvalidArgument, "%s is required.", field).WithField(field)
	}
	a, err := mail.ParseAddress(v)
	if err != nil || !strings.Contains(a.Address, "@") || strings.HasPrefix(a.Address, "@") || strings.HasSuffix(a.Address, "@") {
		return "", models.Errorf(models.CodeInvalidArgument, "%s is not one valid email address.", field).WithField(field)
	}
	if err := headerText(field, a.Address, MaxAddressChars); err != nil {
		return "", err
	}
	return a.Address, nil
}

// cleanBody makes a received body storable: invalid UTF-8 and control
// characters other than tab and line breaks (NUL included) become U+FFFD.
// Mail from the outside world is kept rather than refused for a stray
// form feed; what is sent through holdco is refused instead (bodyText).
func cleanBody(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if isControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return '\uFFFD'
		}
		return r
	}, v)
}
