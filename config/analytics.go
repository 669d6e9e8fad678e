package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// Analytics is the capture of the companies' web analytics (api role).
type Analytics struct {
	// TrustedProxies are the addresses (or CIDR prefixes) of the reverse
	// proxies in front of holdco: only a request from one of them may name
	// the client's address in X-Forwarded-For. Empty: the peer's address
	// is the client's.
	TrustedProxies []netip.Prefix
	// QueueEvents is how many captured events may wait for the writer
	// before capture answers 503.
	QueueEvents int
}

func loadAnalytics(e environment) (Analytics, error) {
	var a Analytics
	for _, part := range strings.Split(e.get("HOLDCO_TRUSTED_PROXIES"), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			addr, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return a, &Error{"HOLDCO_TRUSTED_PROXIES", fmt.Sprintf("%q is not an IP address or CIDR prefix", part)}
			}
			p = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		a.TrustedProxies = append(a.TrustedProxies, p.Masked())
	}
	n, err := e.count("HOLDCO_ANALYTICS_QUEUE_EVENTS", false)
	if err != nil {
		return a, err
	}
	a.QueueEvents = int(min(n, 10_000_000))
	return a, nil
}
