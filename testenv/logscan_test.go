package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLogPatternsCatchWhatMustNotBeLogged: each pattern of the log scan
// finds its kind of secret, and ordinary log lines pass.
func TestLogPatternsCatchWhatMustNotBeLogged(t *testing.T) {
	for name, line := range map[string]string{
		"holdco credential":          `level=INFO msg="token created" token=svc_u_v1_Zm9vYmFyYmF6cXV4`,
		"stripe key":                 `stripe: key sk_test_4eC39HqLyjWDarjtT1zdp7dc rejected`,
		"webhook secret":             `secret=whsec_abcdef123456`,
		"signed URL":                 `url=http://127.0.0.1:8083/_blob/k?exp=1&sig=Zm9vYmFyYmF6&fn=a.txt`,
		"one-time code in a URL":     `path="/auth/callback?code=abcdefghijklmnopqrstuvwxyz&state=x"`,
		"bearer token":               `header="Authorization: Bearer abcdefghijklmnopqrstu"`,
		"JWT":                        `cookie=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig`,
		"email address":              `msg="signed in" user=ada@example.com`,
		"password":                   `dsn="host=db password=hunter22 user=x"`,
		"database URL with password": `database=postgres://holdco:s3cret@db:5432/holdco`,
	} {
		assert.Contains(t, ScanLogLine(line), name, line)
	}
	for _, line := range []string{
		`time=2026-01-01T00:00:00Z level=INFO msg="request" method=GET path=/companies/6ba7b810-9dad-11d1-80b4-00c04fd430c8 status=200 request_id=abc`,
		`level=WARN msg="health: dependency unavailable" dependency=database error="dial tcp 127.0.0.1:5432: connect: connection refused"`,
		`level=INFO msg="holdco started" database=postgres://holdco:xxxxx@db:5432/holdco api=http://127.0.0.1:8080`,
		`level=DEBUG msg="oauth: code issued" client_id=hco_dcr_abc state_len=12`,
		`level=INFO msg=configured dsn="host=db password=xxxxx"`,
	} {
		assert.Empty(t, ScanLogLine(line), line)
	}
}
