package founding

import (
	"strings"
	"unicode"

	"holdco/models"
	"holdco/service"
)

// checkIdea is the one rule for an idea, of the connector's create_business
// and the web founding alike:
//
//   - invalid_argument (field idea): not text (bad UTF-8, control
//     characters other than tab and line breaks), empty, or longer than
//     MaxIdeaLen characters;
//   - idea_not_allowed: it holds no letter or digit at all (punctuation,
//     symbols or emoji only: nothing to found a business on), or it holds
//     one of the configured deny terms as a whole word.
//
// There is no moderation call: the deny list is the operator's.
func (s *Service) checkIdea(idea string) (string, error) {
	if e := service.CheckText(idea, true); e != nil {
		return "", e.WithField("idea")
	}
	trimmed := strings.TrimSpace(idea)
	if trimmed == "" {
		return "", models.Errorf(models.CodeInvalidArgument, "Describe the idea: what the business sells and to whom.").WithField("idea")
	}
	if n := len([]rune(trimmed)); n > MaxIdeaLen {
		return "", models.Errorf(models.CodeInvalidArgument, "The idea has %d characters; at most %d are allowed.", n, MaxIdeaLen).WithField("idea")
	}
	words := ideaWords(trimmed)
	if len(words) == 0 {
		return "", models.Errorf(models.CodeIdeaNotAllowed, "The idea holds no words (only symbols or punctuation); describe the business in words.").
			With("reason", "no_words")
	}
	for _, term := range s.limits.DenyTerms {
		term = strings.ToLower(strings.TrimSpace(term))
		if term == "" {
			continue
		}
		for _, w := range words {
			if w == term {
				return "", models.Errorf(models.CodeIdeaNotAllowed, "This service does not found businesses of this kind (the idea mentions %q).", term).
					With("reason", "denied_term")
			}
		}
	}
	return trimmed, nil
}

// ideaWords are the idea's words, lower-case: runs of letters and digits.
func ideaWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// SuggestName is a business name drawn from an idea: its first four words,
// capitalized, at most 60 characters ("Company" when there are none).
func SuggestName(idea string) string {
	words := strings.FieldsFunc(idea, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) > 4 {
		words = words[:4]
	}
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	name := strings.Join(words, " ")
	if r := []rune(name); len(r) > 60 {
		name = strings.TrimSpace(string(r[:60]))
	}
	if name == "" {
		name = "Company"
	}
	return name
}

// checkName checks an optional business name: one line, at most 200
// characters.
func checkName(name string) (string, error) {
	if e := service.CheckText(name, false); e != nil {
		return "", e.WithField("name")
	}
	name = strings.TrimSpace(name)
	if n := len([]rune(name)); n > 200 {
		return "", models.Errorf(models.CodeInvalidArgument, "The name has %d characters; at most 200 are allowed.", n).WithField("name")
	}
	return name, nil
}
