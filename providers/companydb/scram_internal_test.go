package companydb

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseVerifier splits SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>.
func parseVerifier(t *testing.T, v string) (iter int, salt, storedKey, serverKey []byte) {
	t.Helper()
	rest, ok := strings.CutPrefix(v, "SCRAM-SHA-256$")
	require.True(t, ok, "not a SCRAM-SHA-256 verifier")
	params, keys, ok := strings.Cut(rest, "$")
	require.True(t, ok)
	it, s, _ := strings.Cut(params, ":")
	sk, srv, _ := strings.Cut(keys, ":")
	iter, err := strconv.Atoi(it)
	require.NoError(t, err)
	dec := func(x string) []byte {
		b, err := base64.StdEncoding.DecodeString(x)
		require.NoError(t, err)
		return b
	}
	return iter, dec(s), dec(sk), dec(srv)
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// The verifier authenticates the RFC 7677 example exchange the way a
// server does: the client's proof yields a ClientKey whose hash is the
// StoredKey, and the ServerKey signs the server's final message.
func TestSCRAMVerifierAcceptsTheRFC7677Login(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	v, err := scramVerifierWith("pencil", salt, 4096)
	require.NoError(t, err)
	_, _, storedKey, serverKey := parseVerifier(t, v)

	const authMessage = "n=user,r=rOprNGfwEbeRWgbNEkqO," +
		"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096," +
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	sig := hmacSHA256(storedKey, authMessage)
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ sig[i]
	}
	got := sha256.Sum256(clientKey)
	assert.Equal(t, storedKey, got[:], "the client's proof verifies")
	assert.Equal(t, "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
		base64.StdEncoding.EncodeToString(hmacSHA256(serverKey, authMessage)), "the server signature matches")

	// A fresh salt every time: the verifier never repeats.
	a, err := scramVerifier("pencil")
	require.NoError(t, err)
	b, err := scramVerifier("pencil")
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, "SCRAM-SHA-256$4096:"))
}

// statementLog records every statement and argument sent on the admin
// connections.
type statementLog struct {
	mu   sync.Mutex
	sent []string
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, d.SQL)
	for _, a := range d.Args {
		if s, ok := a.(string); ok {
			l.sent = append(l.sent, s)
		}
	}
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// The company role's password never travels in a statement (where
// log_statement=ddl would log it): the server gets a SCRAM verifier, and
// the verifier Postgres stores accepts the password.
func TestRolePasswordIsSentOnlyAsSCRAMVerifier(t *testing.T) {
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("TEST_DATABASE_URL not set")
	}
	ctx := context.Background()
	var log statementLog
	pg, err := newPostgres(dsn, []byte("test secret"), nil, &log)
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	id := uuid.NewString()
	t.Cleanup(func() { _ = pg.Drop(ctx, id) })
	_, err = pg.Ensure(ctx, id)
	require.NoError(t, err)
	require.NoError(t, pg.Check(ctx, id))

	password := pg.password(id)
	log.mu.Lock()
	require.NotEmpty(t, log.sent)
	for _, s := range log.sent {
		assert.NotContains(t, s, password)
	}
	log.mu.Unlock()

	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer admin.Close()
	var super bool
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super))
	if !super {
		t.Skip("reading pg_authid needs a superuser")
	}
	var stored string
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", Name(id)).Scan(&stored))
	iter, salt, _, _ := parseVerifier(t, stored)
	assert.Equal(t, scramIterations, iter)
	want, err := scramVerifierWith(password, salt, iter)
	require.NoError(t, err)
	assert.Equal(t, want, stored, "the stored verifier is the password's")

	// Postgres's own hashing of a password agrees with scramVerifierWith.
	role := "holdco_scram_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	conn, err := admin.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET password_encryption = 'scram-sha-256'")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "CREATE ROLE "+role+" PASSWORD 'correct horse battery staple'")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP ROLE IF EXISTS "+role) })
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", role).Scan(&stored))
	iter, salt, _, _ = parseVerifier(t, stored)
	want, err = scramVerifierWith("correct horse battery staple", salt, iter)
	require.NoError(t, err)
	assert.Equal(t, want, stored)
}
