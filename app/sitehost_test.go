package app_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"holdco/providers/blob/local"
	"holdco/providers/statichost"
	"holdco/store"
)

// siteHost is the hosting adapter a worker of the app under dir builds:
// the app's database and its local blob store (<dir>/blobs), deploying
// from src (nil: none). The environment key is the test's own.
func siteHost(t *testing.T, st *store.Store, dir, sitesURL string, src statichost.Source) *statichost.Host {
	t.Helper()
	return siteHostWithKey(t, st, dir, sitesURL, src, bytes.Repeat([]byte("e"), 32))
}

// siteHostWithKey is siteHost with the app's own environment key, to read
// what its workers wrote.
func siteHostWithKey(t *testing.T, st *store.Store, dir, sitesURL string, src statichost.Source, envKey []byte) *statichost.Host {
	t.Helper()
	blobs, err := local.New(filepath.Join(dir, "blobs"), bytes.Repeat([]byte("k"), 32), sitesURL)
	require.NoError(t, err)
	o := statichost.Options{BaseURL: sitesURL, Records: st.Sites(), Blobs: blobs, EnvKey: envKey}
	if src != nil {
		o.Source = src
	}
	h, err := statichost.New(o)
	require.NoError(t, err)
	return h
}
