package service

import (
	"unicode/utf8"

	"holdco/models"
)

// CheckText refuses invalid UTF-8 and NUL everywhere, and control
// characters other than tab, newline and carriage return (all of them in a
// single-line value). The REST edge refuses these already; the agents'
// tools and the connector reach the use cases without it, so the use cases
// check again.
func CheckText(s string, multiline bool) *models.Error {
	if !utf8.ValidString(s) {
		return models.Errorf(models.CodeInvalidArgument, "The text is not valid UTF-8.")
	}
	for _, r := range s {
		if r == '\t' || r == '\n' || r == '\r' {
			if multiline {
				continue
			}
			return models.Errorf(models.CodeInvalidArgument, "The text must be one line (it holds U+%04X).", r)
		} else if r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f) {
			continue
		}
		return models.Errorf(models.CodeInvalidArgument, "The text holds a control character (U+%04X).", r)
	}
	return nil
}
