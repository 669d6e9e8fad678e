package email_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/email"
	mailsvc "holdco/service/mail"
)

var (
	_ mailsvc.Sender      = (*email.SMTP)(nil)
	_ mailsvc.Sender      = (*email.Local)(nil)
	_ mailsvc.BodyFetcher = (*email.Local)(nil)
)

// received is one message the test server accepted.
type received struct {
	tls        bool // the message came over TLS
	from, user string
	to         []string
	data       []byte
}

// smtpServer is a real SMTP server (go-smtp) on a loopback port, with
// STARTTLS on a certificate of its own and AUTH PLAIN for one user.
type smtpServer struct {
	mu   sync.Mutex
	msgs []received
	addr string
	tls  *tls.Config // what a client must trust
}

func (s *smtpServer) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

type session struct {
	srv  *smtpServer
	conn *smtp.Conn
	cur  received
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "holdco" || pass != "s3cret" {
			return errors.New("invalid credentials")
		}
		s.cur.user = user
		return nil
	}), nil
}
func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	s.cur.from = from
	_, s.cur.tls = s.conn.TLSConnectionState()
	return nil
}
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if strings.HasPrefix(to, "refused") {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user " + to}
	}
	s.cur.to = append(s.cur.to, to)
	return nil
}
func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = b
	s.srv.mu.Lock()
	s.srv.msgs = append(s.srv.msgs, s.cur)
	s.srv.mu.Unlock()
	s.cur = received{user: s.cur.user}
	return nil
}
func (s *session) Reset()        { s.cur = received{user: s.cur.user} }
func (s *session) Logout() error { return nil }

func startSMTP(t *testing.T) *smtpServer { return startSMTPWith(t, false) }

// startSMTPWith starts the server; implicit speaks TLS from the first byte
// (port 465 style) instead of offering STARTTLS.
func startSMTPWith(t *testing.T, implicit bool) *smtpServer {
	t.Helper()
	cert, pool := selfSigned(t)
	st := &smtpServer{tls: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{srv: st, conn: c}, nil }))
	srv.Domain = "mx.test"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	st.addr = l.Addr().String()
	if implicit {
		l = tls.NewListener(l, srv.TLSConfig)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return st
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mx.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

func (s *smtpServer) sender(t *testing.T, tlsMode, user string) *email.SMTP {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.addr)
	p, _ := strconv.Atoi(port)
	snd, err := email.NewSMTP(email.SMTPConfig{Host: host, Port: p, Username: user, Password: "s3cret", TLS: tlsMode, TLSConfig: s.tls})
	require.NoError(t, err)
	return snd
}

func outgoing() models.OutgoingEmail {
	return models.OutgoingEmail{MessageID: "m1.abc@mail.test", FromName: `Acme "Rockets"`, From: "acme@mail.test",
		EnvelopeFrom: "bounces@mail.test", To: "Jane Doe <jane@example.com>", ReplyTo: "founder@example.org",
		Subject: "Grüße, your order", Text: "Hello Jane,\r\n.\r\nBcc: not-a-header@example.com\r\nThanks"}
}

func TestSMTPSendsThroughARealServerWithStartTLSAndAuth(t *testing.T) {
	srv := startSMTP(t)
	require.NoError(t, srv.sender(t, email.TLSStartTLS, "holdco").Send(context.Background(), outgoing()))

	msgs := srv.messages()
	require.Len(t, msgs, 1)
	got := msgs[0]
	assert.True(t, got.tls, "STARTTLS was used")
	assert.Equal(t, "holdco", got.user, "authenticated")
	assert.Equal(t, "bounces@mail.test", got.from, "envelope sender")
	assert.Equal(t, []string{"jane@example.com"}, got.to, "only the one recipient")

	m, err := mail.ReadMessage(strings.NewReader(string(got.data)))
	require.NoError(t, err)
	from, err := mail.ParseAddress(m.Header.Get("From"))
	require.NoError(t, err)
	assert.Equal(t, mail.Address{Name: `Acme "Rockets"`, Address: "acme@mail.test"}, *from)
	to, err := mail.ParseAddress(m.Header.Get("To"))
	require.NoError(t, err)
	assert.Equal(t, "jane@example.com", to.Address)
	rt, err := mail.ParseAddress(m.Header.Get("Reply-To"))
	require.NoError(t, err)
	assert.Equal(t, "founder@example.org", rt.Address)
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	assert.Equal(t, "Grüße, your order", subject)
	assert.Equal(t, "<m1.abc@mail.test>", m.Header.Get("Message-Id"))
	assert.Empty(t, m.Header.Get("Bcc"), "a body line is never a header")
	assert.Empty(t, m.Header["Cc"])
	body, err := io.ReadAll(m.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), "Bcc: not-a-header@example.com", "the body line stays in the body")
	assert.Contains(t, string(body), "\r\n.\r\n", "a lone dot survives the transfer (dot-stuffed on the wire)")
}

func TestSMTPWithImplicitTLS(t *testing.T) {
	srv := startSMTPWith(t, true)
	require.NoError(t, srv.sender(t, email.TLSImplicit, "holdco").Send(context.Background(), outgoing()))
	msgs := srv.messages()
	require.Len(t, msgs, 1)
	assert.True(t, msgs[0].tls)
	assert.Equal(t, "holdco", msgs[0].user)

	// A client that does not trust the server's certificate sends nothing.
	host, port, _ := net.SplitHostPort(srv.addr)
	p, _ := strconv.Atoi(port)
	untrusting, err := email.NewSMTP(email.SMTPConfig{Host: host, Port: p, TLS: email.TLSImplicit, Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.Error(t, untrusting.Send(context.Background(), outgoing()))
	assert.Len(t, srv.messages(), 1)
}

func TestSMTPWithoutTLSNorAuth(t *testing.T) {
	srv := startSMTP(t)
	m := outgoing()
	m.EnvelopeFrom, m.ReplyTo = "", ""
	require.NoError(t, srv.sender(t, email.TLSNone, "").Send(context.Background(), m))
	msgs := srv.messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, "acme@mail.test", msgs[0].from, "the From address is the envelope sender by default")
	assert.Empty(t, msgs[0].user)
	assert.False(t, msgs[0].tls)
	parsed, err := mail.ReadMessage(strings.NewReader(string(msgs[0].data)))
	require.NoError(t, err)
	assert.Empty(t, parsed.Header.Get("Reply-To"))
}

func TestSMTPWrongPasswordFails(t *testing.T) {
	srv := startSMTP(t)
	host, port, _ := net.SplitHostPort(srv.addr)
	p, _ := strconv.Atoi(port)
	snd, err := email.NewSMTP(email.SMTPConfig{Host: host, Port: p, Username: "holdco", Password: "wrong", TLS: email.TLSStartTLS, TLSConfig: srv.tls})
	require.NoError(t, err)
	err = snd.Send(context.Background(), outgoing())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "jane@example.com", "errors carry no address")
	assert.Empty(t, srv.messages())
}

func TestSMTPRefusalCarriesNoAddress(t *testing.T) {
	srv := startSMTP(t)
	m := outgoing()
	m.To = "refused-jane@example.com"
	err := srv.sender(t, email.TLSStartTLS, "holdco").Send(context.Background(), m)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "refused-jane", "the server's echo of the address is dropped")
	assert.Contains(t, err.Error(), "550")
	assert.Empty(t, srv.messages())
}

func TestSMTPRefusesHeaderInjection(t *testing.T) {
	srv := startSMTP(t)
	snd := srv.sender(t, email.TLSStartTLS, "holdco")
	for name, mutate := range map[string]func(*models.OutgoingEmail){
		"subject CRLF":   func(m *models.OutgoingEmail) { m.Subject = "Hi\r\nBcc: victim@example.com" },
		"subject LF":     func(m *models.OutgoingEmail) { m.Subject = "Hi\nBcc: victim@example.com" },
		"subject CR":     func(m *models.OutgoingEmail) { m.Subject = "Hi\rBcc: victim@example.com" },
		"to":             func(m *models.OutgoingEmail) { m.To = "jane@example.com\r\nBcc: victim@example.com" },
		"reply-to":       func(m *models.OutgoingEmail) { m.ReplyTo = "a@example.com\nBcc: victim@example.com" },
		"from name":      func(m *models.OutgoingEmail) { m.FromName = "Acme\r\nBcc: victim@example.com" },
		"message id":     func(m *models.OutgoingEmail) { m.MessageID = "x@y>\r\nBcc: victim@example.com" },
		"two recipients": func(m *models.OutgoingEmail) { m.To = "jane@example.com, victim@example.com" },
	} {
		t.Run(name, func(t *testing.T) {
			m := outgoing()
			mutate(&m)
			require.Error(t, snd.Send(context.Background(), m))
		})
	}
	assert.Empty(t, srv.messages(), "nothing reached the server")
}

func TestNewSMTPChecksSettings(t *testing.T) {
	_, err := email.NewSMTP(email.SMTPConfig{Host: "", Port: 25, TLS: email.TLSNone})
	require.Error(t, err)
	_, err = email.NewSMTP(email.SMTPConfig{Host: "smtp.test", Port: 25, TLS: "ssl3"})
	require.Error(t, err)
}
