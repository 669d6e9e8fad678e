package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// IsPostgres reports whether a database URL selects Postgres.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

func validateDatabaseURL(dsn string) error {
	if !IsPostgres(dsn) {
		if strings.Contains(dsn, "://") {
			return &Error{"DATABASE_URL", fmt.Sprintf("unsupported scheme in %q: use postgres://… or a SQLite file path", redact(dsn))}
		}
		return nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return &Error{"DATABASE_URL", "not a valid postgres URL (check the quoting of special characters in the password)"}
	}
	if u.Host == "" {
		return &Error{"DATABASE_URL", fmt.Sprintf("postgres URL %q has no host", redact(dsn))}
	}
	if u.Port() != "" {
		if _, err := strconv.Atoi(u.Port()); err != nil {
			return &Error{"DATABASE_URL", fmt.Sprintf("postgres URL %q has an invalid port", redact(dsn))}
		}
	}
	return nil
}

// redact hides a password in a URL before it is printed: the user-info
// password and a password (or sslpassword) query parameter, which pgx
// accepts too.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "<unparseable>"
	}
	q := u.Query()
	changed := false
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Redact is exported for callers that log the database URL.
func Redact(dsn string) string {
	if !strings.Contains(dsn, "://") {
		return dsn
	}
	return redact(dsn)
}
