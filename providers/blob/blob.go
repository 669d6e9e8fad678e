// Package blob holds what the object-storage adapters share: the rule for
// keys and the Content-Disposition of downloads. The adapters are in
// providers/blob/local (a directory, downloads served by holdco on the
// sites origin with signed expiring URLs) and providers/blob/s3blob (any
// S3-protocol store, presigned GET URLs). The interface they satisfy is
// defined where it is used (service/files.BlobStore).
package blob

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MaxKeyLength bounds a key. Keys are made by holdco from random ids
// (never from a path a user typed): "<company id>/<blob id>" for files,
// "runs/<run id>/<name>.jsonl" for run traces.
const MaxKeyLength = 128

// A segment is lower-case letters, digits and dashes, starting with a
// letter or digit; the last one may end in one extension (".jsonl").
var keyPattern = regexp.MustCompile(`^([a-z0-9][a-z0-9-]*/)*[a-z0-9][a-z0-9-]*(\.[a-z0-9]+)?$`)

// ErrBadKey: a key that holdco would never make.
var ErrBadKey = errors.New("blob: invalid key")

// CheckKey refuses a key that is not lower-case letters, digits and dashes
// in slash-separated segments, the last with an optional extension (so it
// can never name a file outside the local adapter's directory: no segment
// is "." or "..").
func CheckKey(key string) error {
	if len(key) > MaxKeyLength || !keyPattern.MatchString(key) {
		return fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	return nil
}

// ErrBadPrefix: a listing prefix that is not a folder of holdco's keys.
var ErrBadPrefix = errors.New("blob: invalid prefix")

// CheckPrefix refuses a listing prefix that is not a folder: segments of
// the key rule (without extensions), each followed by a slash ("runs/<id>/").
func CheckPrefix(prefix string) error {
	folder, ok := strings.CutSuffix(prefix, "/")
	if !ok || len(prefix) > MaxKeyLength || strings.Contains(folder, ".") || CheckKey(folder) != nil {
		return fmt.Errorf("%w: %q", ErrBadPrefix, prefix)
	}
	return nil
}

// ContentDisposition is the header value that makes a browser save a
// download as name: an ASCII fallback in filename (RFC 6266) and the exact
// name in filename* (RFC 5987, UTF-8, percent-encoded).
func ContentDisposition(name string) string {
	if name == "" {
		name = "download"
	}
	var ascii, ext strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f || r >= 0x80 || r == '"' || r == '\\':
			ascii.WriteByte('_')
		default:
			ascii.WriteRune(r)
		}
	}
	for _, b := range []byte(name) {
		if isAttrChar(b) {
			ext.WriteByte(b)
		} else {
			fmt.Fprintf(&ext, "%%%02X", b)
		}
	}
	return `attachment; filename="` + ascii.String() + `"; filename*=UTF-8''` + ext.String()
}

// isAttrChar is RFC 5987's attr-char: what may stay unencoded in
// filename*.
func isAttrChar(b byte) bool {
	switch {
	case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", b) >= 0
}

// DownloadHeaders are the security headers of every download served by
// holdco: tenant content never runs (a sandbox without scripts or the
// same origin) and its type is never sniffed.
var DownloadHeaders = map[string]string{
	"Content-Security-Policy": "sandbox; default-src 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Cache-Control":           "private, no-store",
	"Referrer-Policy":         "no-referrer",
}
