package store

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSQLiteDSNForms(t *testing.T) {
	for in, wantPath := range map[string]string{
		"data/holdco.db":          "data/holdco.db",
		"sqlite:data/holdco.db":   "data/holdco.db",
		"sqlite:///abs/holdco.db": "/abs/holdco.db",
		"file:data/holdco.db":     "data/holdco.db",
		"file:///abs/holdco.db":   "/abs/holdco.db",
		"SQLite:./x.db?_txlock=x": "./x.db",
	} {
		path, driverDSN, err := sqliteDSN(in)
		require.NoError(t, err, in)
		assert.Equal(t, wantPath, path, in)
		assert.Regexp(t, `^`+wantPath+`\?`, driverDSN, in)
	}
}

func TestSQLiteDSNAddsDefaultsUnlessSet(t *testing.T) {
	_, driverDSN, err := sqliteDSN("x.db")
	require.NoError(t, err)
	q := parseQuery(t, driverDSN)
	assert.ElementsMatch(t, []string{"busy_timeout(5000)", "journal_mode(wal)", "foreign_keys(1)"}, q["_pragma"])
	assert.Equal(t, "immediate", q.Get("_txlock"))

	_, driverDSN, err = sqliteDSN("x.db?_pragma=busy_timeout(100)&_txlock=exclusive&_pragma=cache_size(-2000)")
	require.NoError(t, err)
	q = parseQuery(t, driverDSN)
	assert.ElementsMatch(t, []string{"busy_timeout(100)", "cache_size(-2000)", "journal_mode(wal)", "foreign_keys(1)"}, q["_pragma"])
	assert.Equal(t, "exclusive", q.Get("_txlock"))
}

func parseQuery(t *testing.T, dsn string) url.Values {
	t.Helper()
	_, rawQuery, _ := strings.Cut(dsn, "?")
	q, err := url.ParseQuery(rawQuery)
	require.NoError(t, err)
	return q
}
