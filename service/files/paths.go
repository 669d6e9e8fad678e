package files

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"holdco/models"
)

// Path limits.
const (
	// MaxPathBytes bounds a file's path (UTF-8 bytes, after NFC).
	MaxPathBytes = 1024
	// MaxSegmentBytes bounds one segment of a path (a folder or file name).
	MaxSegmentBytes = 255
	// MaxSourceLength bounds the source label.
	MaxSourceLength = 64
	// DefaultSource labels files uploaded without one.
	DefaultSource = "upload"
)

// NormalizePath checks and normalizes a file's path: Unicode NFC, segments
// separated by "/", none empty, "." or "..", no leading "/", no NUL,
// control character or backslash, at most MaxPathBytes bytes and
// MaxSegmentBytes per segment. A path ending in "/" names a folder:
// the file goes into it under filename. An empty path is filename.
func NormalizePath(p, filename string) (string, error) {
	if p == "" || strings.HasSuffix(p, "/") {
		name, err := NormalizeFilename(filename)
		if err != nil {
			return "", err
		}
		p += name
	}
	p = norm.NFC.String(p)
	if err := checkPath(p, "path"); err != nil {
		return "", err
	}
	return p, nil
}

// NormalizePrefix checks a folder prefix like a path and gives it exactly
// one trailing "/", so that "a" and "a/" both match a/x but never ab/x.
func NormalizePrefix(prefix string) (string, error) {
	p := norm.NFC.String(strings.TrimRight(prefix, "/"))
	if p == "" {
		return "", invalid("prefix", "The prefix must name a folder (for example reports/); deleting every file at once is not offered.")
	}
	if err := checkPath(p, "prefix"); err != nil {
		return "", err
	}
	return p + "/", nil
}

// NormalizeFilename is the name a file is stored under when no path is
// given: the last segment of what the client sent (browsers of old sent a
// whole local path), NFC, checked like a path segment.
func NormalizeFilename(filename string) (string, error) {
	if i := strings.LastIndexAny(filename, `/\`); i >= 0 {
		filename = filename[i+1:]
	}
	name := norm.NFC.String(filename)
	if name == "" {
		return "", invalid("file", "The uploaded file needs a file name (or give a path).")
	}
	if err := checkPath(name, "file"); err != nil {
		return "", err
	}
	return name, nil
}

func checkPath(p, field string) error {
	if !utf8.ValidString(p) {
		return invalid(field, "The path must be valid UTF-8.")
	}
	if len(p) > MaxPathBytes {
		return invalid(field, "The path is longer than %d bytes.", MaxPathBytes)
	}
	if strings.HasPrefix(p, "/") {
		return invalid(field, "The path must not start with /: paths are relative to the company's files.")
	}
	for _, r := range p {
		if r == 0 || unicode.IsControl(r) || r == '\\' || r == '\u2028' || r == '\u2029' {
			return invalid(field, "The path must not contain NUL, control characters or backslashes.")
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return invalid(field, "The path must not contain empty segments (//) or end in /.")
		case seg == "." || seg == "..":
			return invalid(field, "The path must not contain . or .. segments.")
		case len(seg) > MaxSegmentBytes:
			return invalid(field, "A path segment is longer than %d bytes.", MaxSegmentBytes)
		}
	}
	return nil
}

// NormalizeSource checks the source label: empty is DefaultSource;
// otherwise lower-case letters, digits, '-', '_' and '.', starting with a
// letter or digit, at most MaxSourceLength characters.
func NormalizeSource(s string) (string, error) {
	if s == "" {
		return DefaultSource, nil
	}
	if len(s) > MaxSourceLength {
		return "", invalid("source", "The source is longer than %d characters.", MaxSourceLength)
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i > 0 && (r == '-' || r == '_' || r == '.')
		if !ok {
			return "", invalid("source", "The source is a lower-case label such as upload, agent or connector.")
		}
	}
	return s, nil
}

// Name is the last segment of a path: what a download is saved as.
func Name(p string) string { return path.Base(p) }

func invalid(field, format string, args ...any) error {
	return models.Errorf(models.CodeInvalidArgument, format, args...).WithField(field)
}
