package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Growth is domains and ads: the registrar's suggestion grid and the local
// registrar's registration delay.
type Growth struct {
	// TLDs are the TLDs a bare name's suggestion grid covers.
	TLDs []string
	// RegistrarDelay is how long the local registrar takes to register an
	// order.
	RegistrarDelay time.Duration
}

var tldPattern = regexp.MustCompile(`^[a-z]{2,63}$`)

func loadGrowth(e environment) (Growth, error) {
	var g Growth
	for _, t := range strings.Split(e.get("HOLDCO_DOMAIN_TLDS"), ",") {
		t = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(t), "."))
		if t == "" {
			continue
		}
		if !tldPattern.MatchString(t) {
			return g, &Error{"HOLDCO_DOMAIN_TLDS", fmt.Sprintf("%q is not a TLD (letters only)", t)}
		}
		g.TLDs = append(g.TLDs, t)
	}
	if len(g.TLDs) == 0 || len(g.TLDs) > 20 {
		return g, &Error{"HOLDCO_DOMAIN_TLDS", "lists 1 to 20 TLDs, comma-separated"}
	}
	var err error
	g.RegistrarDelay, err = e.duration("HOLDCO_REGISTRAR_DELAY", true)
	return g, err
}
