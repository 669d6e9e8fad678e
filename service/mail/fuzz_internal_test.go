package mail

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// FuzzInboundSignature drives the inbound mail webhook's check with
// arbitrary timestamps, signature headers and bodies: only a delivery
// signed with the secret within the tolerance verifies; signed, it
// verifies and any change to its body, to the timestamp's value or to the
// signature's bytes fails; arbitrary headers never verify; a verified
// body is read into a row whose recipient handle (when there is one) is a
// handle of the mail domain.
func FuzzInboundSignature(f *testing.F) {
	for _, b := range []string{
		`{"message_id":"<m1@x>","recipient":"acme@mail.test","from":"Jane <jane@example.com>","subject":"Hi","text":"hello"}`,
		`{"message_id":" ","recipient":"acme+orders@mail.test","from":"x","html":null}`,
		`{"message_id":"<m2@x>","recipient":"ACME@MAIL.TEST","from":"jane@example.com","subject":"a\r\nBcc: x"}`,
		`{}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(b), "1700000000", "v1=00", int64(0), 3)
	}
	f.Add([]byte("x"), " 1700000000 ", "v0=ab, v1=zz,v1=", int64(-301), 0)
	now := time.Unix(1_750_000_000, 0)
	// A store of its own (testenv would import this package back).
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(f.TempDir(), "holdco.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		f.Fatal(err)
	}
	core, err := service.NewCore(ctx, service.Config{PublicURL: "http://holdco.test", SecretKey: []byte("fuzz-secret-key-0123456789abcdef-0123")},
		st, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now })
	if err != nil {
		f.Fatal(err)
	}
	secret := []byte("inbound-fuzz-secret-0123456789abcdef")
	s := &Service{core: core, cfg: Config{Domain: "mail.test", InboundSecret: secret}}
	f.Fuzz(func(t *testing.T, body []byte, timestamp, signature string, skew int64, at int) {
		if s.verify(InboundDelivery{Body: body, Timestamp: timestamp, Signature: signature}) == nil {
			// Only a header holding the MAC verifies.
			want := hex.EncodeToString(mac(secret, strings.TrimSpace(timestamp), body))
			if !strings.Contains(strings.ToLower(signature), want) {
				t.Fatalf("verified without the MAC: ts %q sig %q", timestamp, signature)
			}
		}
		skew %= int64(2 * SignatureTolerance / time.Second)
		ts, sig := Sign(secret, now.Add(time.Duration(skew)*time.Second), body)
		err := s.verify(InboundDelivery{Body: body, Timestamp: ts, Signature: sig})
		fresh := time.Duration(abs(skew))*time.Second <= SignatureTolerance
		if (err == nil) != fresh {
			t.Fatalf("skew %ds: verify = %v", skew, err)
		}
		if !fresh {
			return
		}
		if len(body) > 0 {
			changed := bytes.Clone(body)
			changed[int(uint(at)%uint(len(changed)))] ^= 0x01
			if s.verify(InboundDelivery{Body: changed, Timestamp: ts, Signature: sig}) == nil {
				t.Fatal("a changed body verifies")
			}
		}
		n, _ := strconv.ParseInt(ts, 10, 64)
		if s.verify(InboundDelivery{Body: body, Timestamp: strconv.FormatInt(n+1, 10), Signature: sig}) == nil {
			t.Fatal("another timestamp verifies")
		}
		raw, _ := hex.DecodeString(strings.TrimPrefix(sig, "v1="))
		raw[int(uint(at)%uint(len(raw)))] ^= 0x80
		if s.verify(InboundDelivery{Body: body, Timestamp: ts, Signature: "v1=" + hex.EncodeToString(raw)}) == nil {
			t.Fatal("a changed signature verifies")
		}
		if s.verify(InboundDelivery{Body: body, Timestamp: ts}) == nil {
			t.Fatal("no signature verifies")
		}
		var in InboundMessage
		if json.NewDecoder(bytes.NewReader(body)).Decode(&in) == nil {
			row, handle, err := s.inboundRow(in)
			if err != nil {
				if !models.IsCode(err, models.CodeInvalidArgument) {
					t.Fatalf("inboundRow: %v", err)
				}
				return
			}
			if handle != "" && (!models.ValidHandle(handle) || !strings.HasSuffix(row.ToAddress, "@mail.test")) {
				t.Fatalf("handle %q of %q", handle, row.ToAddress)
			}
		}
	})
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
