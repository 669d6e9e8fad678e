package files

import (
	"encoding/base64"
	"strings"

	"holdco/models"
)

// MaxInlineBytes is the largest file sent inline in a tool's arguments
// (the agents' write_file, the connector's upload_file), decoded: a
// model's or an assistant's arguments are no place for more.
const MaxInlineBytes = 3 << 20

// InlineContent is the bytes of a file sent inline in the argument field:
// base64 (standard encoding, surrounding space ignored) or, with isBase64
// false, the text itself. More than MaxInlineBytes is too_large, measured
// before decoding; content that is not base64 is invalid_argument.
func InlineContent(content string, isBase64 bool, field string) ([]byte, error) {
	if !isBase64 {
		if len(content) > MaxInlineBytes {
			return nil, tooLargeInline(int64(len(content)), field)
		}
		return []byte(content), nil
	}
	enc := strings.TrimSpace(content)
	// DecodedLen counts the padding as bytes: at most 2 more than decoded.
	if n := base64.StdEncoding.DecodedLen(len(enc)); n > MaxInlineBytes+2 {
		return nil, tooLargeInline(int64(n), field)
	}
	data, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, models.Errorf(models.CodeInvalidArgument, "%s is not standard base64.", field).WithField(field)
	}
	if len(data) > MaxInlineBytes {
		return nil, tooLargeInline(int64(len(data)), field)
	}
	return data, nil
}

func tooLargeInline(n int64, field string) error {
	return models.Errorf(models.CodeTooLarge, "The file is %d bytes; a file sent inline is at most %d bytes (3 MB).", n, MaxInlineBytes).
		WithField(field).With("size_bytes", n).With("limit_bytes", MaxInlineBytes)
}
