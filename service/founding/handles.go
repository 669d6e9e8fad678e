package founding

import (
	"context"
	"strings"
	"unicode"

	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
)

// HandleCheck is the answer of the handle check.
type HandleCheck struct {
	// Handle is what was asked; Normalized the handle it becomes (lower
	// case, accents dropped, other characters as single hyphens, at most
	// 64 characters).
	Handle     string
	Normalized string
	// Valid: Handle is a handle as typed (it equals Normalized).
	Valid bool
	// Available: Normalized is free.
	Available bool
	// Suggestion is a free handle: Normalized when available, else the
	// nearest free one (name-2, name-3, …).
	Suggestion string
}

// MaxHandleCheckLen bounds the handle check's input (names are up to 200
// characters).
const MaxHandleCheckLen = 200

// CheckHandle normalizes a wanted handle (or a name) and says whether it
// is free, with a free suggestion; for a signed-in user.
func (s *Service) CheckHandle(ctx context.Context, handle string) (HandleCheck, error) {
	if _, err := service.RequireUser(ctx); err != nil {
		return HandleCheck{}, err
	}
	normalized, err := normalizeHandle(handle)
	if err != nil {
		return HandleCheck{}, err
	}
	out := HandleCheck{Handle: handle, Normalized: normalized}
	out.Valid = out.Normalized == handle
	taken, err := s.store.Companies().HandleTaken(ctx, out.Normalized)
	if err != nil {
		return out, err
	}
	out.Available = !taken
	out.Suggestion = out.Normalized
	if taken {
		if out.Suggestion, err = s.companies.SuggestHandle(ctx, out.Normalized); err != nil {
			return out, err
		}
	}
	return out, nil
}

// normalizeHandle is the rule of a wanted handle, the check's and the
// accepted interview's: text of at most MaxHandleCheckLen characters with
// a letter or a digit, normalized by companies.Slugify (lower case,
// accents dropped, other characters as single hyphens); refused:
// invalid_argument on field handle.
func normalizeHandle(handle string) (string, error) {
	if e := service.CheckText(handle, false); e != nil {
		return "", e.WithField("handle")
	}
	if n := len([]rune(handle)); n > MaxHandleCheckLen {
		return "", models.Errorf(models.CodeInvalidArgument, "The handle has %d characters; at most %d are checked.", n, MaxHandleCheckLen).WithField("handle")
	}
	if strings.IndexFunc(handle, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return "", models.Errorf(models.CodeInvalidArgument, "A handle needs at least one letter or digit.").WithField("handle")
	}
	return companies.Slugify(handle), nil
}
