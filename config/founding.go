package config

import (
	"fmt"
	"strings"
	"unicode"
)

// Founding is the founding gates' numbers and the idea deny list.
type Founding struct {
	// BusinessLimit is how many companies (not archived) one account may
	// have.
	BusinessLimit int64
	// InterviewsPerDay is how many founding interviews one account may
	// open in 24 hours.
	InterviewsPerDay int64
	// PlatformCompanies is how many companies (not archived) the platform
	// runs in all.
	PlatformCompanies int64
	// DenyTerms are words an idea may not contain (idea_not_allowed).
	DenyTerms []string
}

func loadFounding(e environment) (Founding, error) {
	var f Founding
	var err error
	if f.BusinessLimit, err = e.count("HOLDCO_BUSINESS_LIMIT", false); err != nil {
		return f, err
	}
	if f.InterviewsPerDay, err = e.count("HOLDCO_FOUNDING_INTERVIEWS_PER_DAY", false); err != nil {
		return f, err
	}
	if f.PlatformCompanies, err = e.count("HOLDCO_PLATFORM_COMPANY_CAP", false); err != nil {
		return f, err
	}
	for _, term := range strings.Split(e.get("HOLDCO_IDEA_DENY_TERMS"), ",") {
		term = strings.ToLower(strings.TrimSpace(term))
		if term == "" {
			continue
		}
		if strings.IndexFunc(term, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0 {
			return f, &Error{"HOLDCO_IDEA_DENY_TERMS", fmt.Sprintf("%q is not one word (letters and digits only)", term)}
		}
		f.DenyTerms = append(f.DenyTerms, term)
	}
	return f, nil
}
