package testenv

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"

	"holdco/models"
	"holdco/providers/stripepay"
)

var stripeMock struct {
	once sync.Once
	url  string
	err  error
}

// StripeMock returns the address of a stripe-mock (Stripe's API served
// from its OpenAPI document) shared by the tests of this process, started
// on first use from STRIPE_MOCK_BIN, the repository's .cache/bin or PATH.
// Without the binary the test is skipped, except under CI=true, where
// `make test` installs it and its absence is a failure.
func StripeMock(t testing.TB) string {
	t.Helper()
	stripeMock.once.Do(func() { stripeMock.url, stripeMock.err = startStripeMock() })
	if stripeMock.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("stripe-mock: %v", stripeMock.err)
		}
		t.Skipf("stripe-mock: %v (make test installs it)", stripeMock.err)
	}
	return stripeMock.url
}

func stripeMockBinary() (string, error) {
	if p := os.Getenv("STRIPE_MOCK_BIN"); p != "" {
		return p, nil
	}
	_, file, _, _ := runtime.Caller(0)
	if p := filepath.Join(filepath.Dir(file), "..", ".cache", "bin", "stripe-mock"); fileExists(p) {
		return p, nil
	}
	return exec.LookPath("stripe-mock")
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func startStripeMock() (string, error) {
	bin, err := stripeMockBinary()
	if err != nil {
		return "", fmt.Errorf("binary not found: %w", err)
	}
	// The port is free when picked, but another process (another test
	// binary's stripe-mock choosing its HTTPS port) can take it before
	// stripe-mock binds it: that stripe-mock exits, and the start is tried
	// again on another port.
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		url, err := startStripeMockOnce(bin)
		if err == nil {
			return url, nil
		}
		last = err
	}
	return "", last
}

// startStripeMockOnce starts stripe-mock on a free port and waits until it
// answers as Stripe's API does (200 to an account read: an HTTPS server
// answering a plain request with 400 is someone else's), or exits.
func startStripeMockOnce(bin string) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	_ = l.Close()
	// HTTPS on a port of its own choosing, so parallel test binaries never clash.
	cmd := exec.Command(bin, "-http-addr", addr, "-https-addr", "127.0.0.1:")
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	url := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-exited:
			return "", fmt.Errorf("%s exited before answering on %s: %v", bin, addr, err)
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/account", nil)
		req.SetBasicAuth("sk_test_probe", "")
		if res, err := http.DefaultClient.Do(req); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return url, nil
			}
		}
	}
	_ = cmd.Process.Kill()
	return "", fmt.Errorf("%s did not answer on %s", bin, addr)
}

// SignedStripeEvent builds a webhook delivery of an event wrapping object,
// signed with secret as Stripe signs it: the payload and the
// Stripe-Signature header.
func SignedStripeEvent(t testing.TB, secret, id, typ string, object any) ([]byte, string) {
	t.Helper()
	raw, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": stripe.APIVersion,
		"created": time.Now().Unix(), "livemode": false, "data": map[string]any{"object": json.RawMessage(raw)}})
	if err != nil {
		t.Fatal(err)
	}
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret})
	return sp.Payload, sp.Header
}

// SignedConnectEvent is SignedStripeEvent for an event of a connected
// account: the event names the account, as the Connect webhook endpoint
// receives it.
func SignedConnectEvent(t testing.TB, secret, id, typ, account string, object any) ([]byte, string) {
	t.Helper()
	return SignedConnectEventAt(t, secret, id, typ, account, time.Now(), object)
}

// SignedConnectEventAt is SignedConnectEvent created at a given time (the
// order of subscription states).
func SignedConnectEventAt(t testing.TB, secret, id, typ, account string, created time.Time, object any) ([]byte, string) {
	t.Helper()
	raw, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": stripe.APIVersion, "account": account,
		"created": created.Unix(), "livemode": false, "data": map[string]any{"object": json.RawMessage(raw)}})
	if err != nil {
		t.Fatal(err)
	}
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret})
	return sp.Payload, sp.Header
}

// StripeConnectWebhookSecret signs the Connect endpoint's events for the
// adapter StripePayments builds.
const StripeConnectWebhookSecret = "whsec_connect_test"

// Test prices of the plans StripePayments sells.
const (
	FounderPriceID = "price_founder"
	HostingPriceID = "price_hosting"
)

// StripePayments is the Stripe adapter pointed at the shared stripe-mock,
// verifying webhooks with webhookSecret; the Founder plan grants 100
// credits per paid invoice.
func StripePayments(t testing.TB, webhookSecret string) *stripepay.Client {
	t.Helper()
	c, err := stripepay.New(stripepay.Config{SecretKey: "sk_test_platform", ConnectSecretKey: "sk_test_connect", WebhookSecret: webhookSecret,
		ConnectWebhookSecret: StripeConnectWebhookSecret,
		APIBase:              StripeMock(t),
		PlanPrices:           map[models.Plan]string{models.PlanFounder: FounderPriceID, models.PlanHosting: HostingPriceID},
		PlanCredits:          map[models.Plan]int64{models.PlanFounder: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
