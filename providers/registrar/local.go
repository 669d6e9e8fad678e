// Package registrar holds the domain registrar adapters. Local is the
// offline adapter (the embedded default and the tests): deterministic
// availability and prices, and orders that register after a configurable
// delay, kept on disk so they survive restarts. A real registrar's API
// adapter implements the same methods (service/growth.Registrar).
package registrar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"holdco/models"
)

// ErrUnknownOrder: the registrar has no such order.
var ErrUnknownOrder = errors.New("registrar: unknown order")

// PricesCents are the local adapter's first-year prices per TLD (US
// cents); a TLD not listed is not offered.
var PricesCents = map[string]int64{
	"com": 1299, "net": 1499, "org": 1299, "io": 3999, "co": 2999, "app": 1799, "dev": 1599,
	"ai": 7999, "shop": 2999, "store": 4999, "xyz": 299, "online": 3499, "site": 2999, "biz": 1799,
}

// taken are names the local adapter always reports registered, so a
// search shows what "taken" looks like.
var taken = map[string]bool{"example": true, "google": true, "holdco": true, "amazon": true, "facebook": true, "test": true}

// Local is the offline registrar.
type Local struct {
	dir   string
	delay time.Duration
	now   func() time.Time
	mu    sync.Mutex
}

// NewLocal keeps orders under dir (made by the first order: a process
// that only searches writes nothing); an order registers delay after it
// was placed.
func NewLocal(dir string, delay time.Duration, now func() time.Time) (*Local, error) {
	if dir == "" {
		return nil, fmt.Errorf("registrar: no directory")
	}
	if now == nil {
		now = time.Now
	}
	return &Local{dir: dir, delay: delay, now: now}, nil
}

// Search answers availability and price for each domain (ASCII, lower
// case), in order.
func (l *Local) Search(ctx context.Context, domains []string) ([]models.DomainAvailability, error) {
	out := make([]models.DomainAvailability, 0, len(domains))
	for _, d := range domains {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, l.check(d, ""))
	}
	return out, nil
}

// check answers domain's availability. A name an order holds is taken,
// except for that order itself (ownKey, "" for a search): the retry of an
// order a crash cut after its marker finds the name still its own.
func (l *Local) check(domain, ownKey string) models.DomainAvailability {
	a := models.DomainAvailability{Domain: domain, Currency: "usd"}
	name, tld, ok := strings.Cut(domain, ".")
	if i := strings.LastIndexByte(domain, '.'); i >= 0 {
		tld = domain[i+1:]
	}
	price, offered := PricesCents[tld]
	if !ok || !offered {
		a.Reason = "tld_not_offered"
		return a
	}
	a.PriceCents = price
	label := name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		label = name[:i]
	}
	if len(strings.TrimPrefix(label, "xn--")) <= 3 {
		a.Premium, a.PriceCents = true, price*20
	}
	switch {
	case taken[label] || hashOf(domain)%10 < 3:
		a.Reason = "taken"
	case l.heldByAnother(domain, ownKey):
		a.Reason = "taken"
	default:
		a.Available = true
	}
	return a
}

func hashOf(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// order is an order file.
type order struct {
	OrderID  string    `json:"order_id"`
	Domain   string    `json:"domain"`
	PlacedAt time.Time `json:"placed_at"`
	Failed   string    `json:"failed,omitempty"`
}

var orderKey = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (l *Local) orderPath(id string) string { return filepath.Join(l.dir, "orders", id+".json") }

func (l *Local) domainPath(domain string) string {
	return filepath.Join(l.dir, "domains", domain)
}

// heldByAnother reports whether a marker holds domain for an order other
// than ownKey's (an unreadable marker counts as held).
func (l *Local) heldByAnother(domain, ownKey string) bool {
	h, held, err := l.holder(domain)
	return err != nil || held && (ownKey == "" || h != ownKey)
}

// holder is the key of the order whose marker holds domain; held is false
// when no marker does. (An empty marker, torn by a crash in an older
// version that wrote markers in place, is held by an unknown order.)
func (l *Local) holder(domain string) (key string, held bool, err error) {
	b, err := os.ReadFile(l.domainPath(domain))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", true, fmt.Errorf("registrar: %w", err)
	}
	return string(b), true, nil
}

// mark writes domain's marker naming key, unless one exists already, and
// returns the key the marker names. The marker appears whole or not at all
// (a complete temporary file linked into place, which fails when the name
// exists), so processes sharing the directory cannot both hold a name and
// a crash leaves no empty marker.
func (l *Local) mark(domain, key string) (string, error) {
	p := l.domainPath(domain)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("registrar: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-")
	if err != nil {
		return "", fmt.Errorf("registrar: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(key); err != nil {
		tmp.Close()
		return "", fmt.Errorf("registrar: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("registrar: %w", err)
	}
	if err := os.Link(tmp.Name(), p); err != nil {
		if errors.Is(err, os.ErrExist) {
			h, _, err := l.holder(domain)
			return h, err
		}
		return "", fmt.Errorf("registrar: %w", err)
	}
	return key, nil
}

// Register places an order for domain; key makes it idempotent (the same
// key returns the same order). A domain another order holds fails.
//
// An order is two writes: the domain's marker (naming the order's key),
// then the order file. A crash between them leaves a marker without an
// order; the retried order (the same key) finds its own marker and goes on
// — it is not "taken" by itself — so the name is neither refused to the
// order that holds it nor locked for everyone else.
func (l *Local) Register(ctx context.Context, domain, key string) (string, error) {
	if !orderKey.MatchString(key) {
		return "", fmt.Errorf("registrar: invalid order key")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, err := os.ReadFile(l.orderPath(key)); err == nil {
		var o order
		if err := json.Unmarshal(b, &o); err != nil {
			return "", fmt.Errorf("registrar: order %s: %w", key, err)
		}
		return o.OrderID, nil
	}
	if err := os.MkdirAll(filepath.Join(l.dir, "orders"), 0o755); err != nil {
		return "", fmt.Errorf("registrar: %w", err)
	}
	o := order{OrderID: key, Domain: domain, PlacedAt: l.now().UTC()}
	if a := l.check(domain, key); !a.Available {
		o.Failed = "The domain is not available (" + a.Reason + ")."
	} else if holder, err := l.mark(domain, key); err != nil {
		return "", err
	} else if holder != key {
		o.Failed = "The domain is not available (taken)."
	}
	b, _ := json.Marshal(o)
	if err := writeAtomic(l.orderPath(key), b); err != nil {
		return "", err
	}
	return o.OrderID, nil
}

// Status reports an order: pending until the delay has passed, then
// registered (or failed, when the domain was not available).
func (l *Local) Status(_ context.Context, orderID string) (models.RegistrarOrder, error) {
	if !orderKey.MatchString(orderID) {
		return models.RegistrarOrder{}, ErrUnknownOrder
	}
	b, err := os.ReadFile(l.orderPath(orderID))
	if errors.Is(err, os.ErrNotExist) {
		return models.RegistrarOrder{}, ErrUnknownOrder
	}
	if err != nil {
		return models.RegistrarOrder{}, fmt.Errorf("registrar: %w", err)
	}
	var o order
	if err := json.Unmarshal(b, &o); err != nil {
		return models.RegistrarOrder{}, fmt.Errorf("registrar: order %s: %w", orderID, err)
	}
	st := models.RegistrarOrder{OrderID: o.OrderID, Domain: o.Domain, State: models.OrderPending}
	switch {
	case o.Failed != "":
		st.State, st.Reason = models.OrderFailed, o.Failed
	case !l.now().Before(o.PlacedAt.Add(l.delay)):
		st.State = models.OrderRegistered
	}
	return st, nil
}

func writeAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-")
	if err != nil {
		return fmt.Errorf("registrar: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("registrar: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("registrar: %w", err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("registrar: %w", err)
	}
	return nil
}
