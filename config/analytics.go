package config

import (
	"fmt"
	"net/netip"
	"strconv"
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
	// AddressRate and KeyRate are the captured events per second one
	// client address and one public key may send (0: no limit).
	AddressRate, KeyRate int
	// RawRetentionDays is how many days of raw events are kept (0: all).
	RawRetentionDays int
}

// MinRawRetentionDays is the shortest raw-event retention: capture takes
// events up to 7 days old, and a late event refolds its visitor's day
// from the raw events of that day.
const MinRawRetentionDays = 8

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
	for _, r := range []struct {
		name string
		dst  *int
	}{{"HOLDCO_ANALYTICS_ADDRESS_RATE", &a.AddressRate}, {"HOLDCO_ANALYTICS_KEY_RATE", &a.KeyRate}} {
		n, err := e.count(r.name, true)
		if err != nil {
			return a, err
		}
		*r.dst = int(min(n, 10_000_000))
	}
	days, err := retentionDays(e.get("HOLDCO_ANALYTICS_RAW_RETENTION"))
	if err != nil {
		return a, &Error{"HOLDCO_ANALYTICS_RAW_RETENTION", err.Error()}
	}
	a.RawRetentionDays = days
	return a, nil
}

// retentionDays reads "90d" (or "90"); "0" keeps everything.
func retentionDays(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
	switch {
	case err != nil || n < 0 || n > 100_000:
		return 0, fmt.Errorf("%q is not a number of days such as 90d (0 keeps raw events for ever)", v)
	case n > 0 && n < MinRawRetentionDays:
		return 0, fmt.Errorf("%q is under %dd: capture takes events up to 7 days old and needs their day's raw events", v, MinRawRetentionDays)
	}
	return n, nil
}
