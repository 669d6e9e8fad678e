package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"holdco/models"
)

// Reading a pipelined row from pgx's raw values. pgx's Rows.Scan plans
// the scan of every column again for each statement it runs (a plan per
// column and destination type, looked up through its type map), then
// scans each value through the plan: for the dashboard's two statements
// (about a hundred columns) that was a tenth of the request's CPU on
// Postgres. scanRow decodes the few wire formats those statements
// answer (text, the integers, bool and timestamptz, in pgx's text or
// binary format) straight into the few destination types they use, and
// leaves any other column or destination to rows.Scan: the answer is the
// same either way (TestRawScanIsPgxsScan).

// rawRows is pgx's result: each column's type and format, and the
// current row's values as sent (nil for NULL).
type rawRows interface {
	FieldDescriptions() []pgconn.FieldDescription
	RawValues() [][]byte
}

// scanRow reads the current row into dest: decoded from pgx's raw values
// when rows are pgx's and every column suits its destination, else by
// rows.Scan.
func scanRow(rows rowSource, dest ...any) error {
	if rr, ok := rows.(rawRows); ok {
		if done, err := scanRaw(rr, dest); done {
			return err
		}
	}
	return rows.Scan(dest...)
}

// errRawUnsupported: a column or destination scanRaw does not decode
// (rows.Scan does).
var errRawUnsupported = errors.New("store: not a raw-decoded column")

// scanRaw decodes the row into dest; done is false (and nothing may be
// relied on in dest) when a column needs rows.Scan. The row's text values
// are copied into one string, which each text destination takes its part
// of: one allocation a row instead of one a column.
func scanRaw(rows rawRows, dest []any) (done bool, err error) {
	fields, values := rows.FieldDescriptions(), rows.RawValues()
	if len(fields) != len(dest) || len(values) != len(dest) {
		return false, nil
	}
	var text rowText
	n := 0
	for i, d := range dest {
		if takesText(d, fields[i].DataTypeOID, values[i]) {
			n += len(values[i])
		}
	}
	if n > 0 {
		var b strings.Builder
		b.Grow(n)
		for i, d := range dest {
			if takesText(d, fields[i].DataTypeOID, values[i]) {
				b.Write(values[i])
			}
		}
		text.s = b.String()
	}
	for i, d := range dest {
		if err := decodeRaw(fields[i].DataTypeOID, fields[i].Format, values[i], d, &text); err != nil {
			if errors.Is(err, errRawUnsupported) {
				return false, nil
			}
			return true, fmt.Errorf("store: column %d (%s): %w", i, fields[i].Name, err)
		}
	}
	return true, nil
}

// rowText is a row's text values in one string, taken in column order.
type rowText struct {
	s   string
	off int
}

func (t *rowText) next(n int) string {
	v := t.s[t.off : t.off+n]
	t.off += n
	return v
}

// takesText is whether decodeRaw takes the value from the row's text: a
// non-NULL text column for a string destination.
func takesText(dest any, oid uint32, v []byte) bool {
	if v == nil || !textOID(oid) {
		return false
	}
	switch dest.(type) {
	case *string, *models.CompanyStatus, emptyIfNull, *pgtype.Text:
		return true
	}
	return false
}

// The Postgres types scanRaw decodes.
const (
	oidBool        = 16
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidBPChar      = 1042
	oidVarchar     = 1043
	oidTimestamptz = 1184
)

// decodeRaw decodes one value (nil: NULL) of the type oid in format into
// dest.
func decodeRaw(oid uint32, format int16, v []byte, dest any, text *rowText) error {
	switch d := dest.(type) {
	case *string:
		return rawText(oid, v, d, text)
	case *models.CompanyStatus:
		var s string
		err := rawText(oid, v, &s, text)
		*d = models.CompanyStatus(s)
		return err
	case emptyIfNull:
		if v == nil {
			*d.s = ""
			return nil
		}
		return rawText(oid, v, d.s, text)
	case *pgtype.Text:
		if v == nil {
			*d = pgtype.Text{}
			return nil
		}
		if !textOID(oid) {
			return errRawUnsupported
		}
		*d = pgtype.Text{String: text.next(len(v)), Valid: true}
		return nil
	case *pgtype.Int8:
		if v == nil {
			*d = pgtype.Int8{}
			return nil
		}
		n, err := rawInt(oid, format, v)
		*d = pgtype.Int8{Int64: n, Valid: err == nil}
		return err
	case *int64:
		if v == nil {
			return errRawNull
		}
		n, err := rawInt(oid, format, v)
		*d = n
		return err
	case *int:
		var n int64
		err := decodeRaw(oid, format, v, &n, text)
		*d = int(n)
		return err
	case *bool:
		if v == nil {
			return errRawNull
		}
		return rawBool(oid, format, v, d)
	case *anyTime:
		if v == nil {
			*d = anyTime{}
			return nil
		}
		t, err := rawTime(oid, format, v)
		*d = anyTime{t: t.UTC(), valid: err == nil}
		return err
	case *time.Time:
		if v == nil {
			return errRawNull
		}
		t, err := rawTime(oid, format, v)
		*d = t
		return err
	case **time.Time:
		if v == nil {
			*d = nil
			return nil
		}
		t, err := rawTime(oid, format, v)
		if err != nil {
			return err
		}
		*d = &t
		return nil
	}
	return errRawUnsupported
}

// errRawNull is a NULL for a destination that cannot hold one (rows.Scan
// fails alike).
var errRawNull = errors.New("a NULL for a destination that cannot hold one")

func textOID(oid uint32) bool {
	return oid == oidText || oid == oidVarchar || oid == oidBPChar || oid == oidName
}

// rawText: a text column's value is its UTF-8 bytes in either format
// (taken from the row's text).
func rawText(oid uint32, v []byte, d *string, text *rowText) error {
	switch {
	case !textOID(oid):
		return errRawUnsupported
	case v == nil:
		return errRawNull
	}
	*d = text.next(len(v))
	return nil
}

func rawInt(oid uint32, format int16, v []byte) (int64, error) {
	if format == pgtype.TextFormatCode {
		if oid != oidInt8 && oid != oidInt4 && oid != oidInt2 {
			return 0, errRawUnsupported
		}
		return strconv.ParseInt(string(v), 10, 64)
	}
	var size int
	switch oid {
	case oidInt8:
		size = 8
	case oidInt4:
		size = 4
	case oidInt2:
		size = 2
	default:
		return 0, errRawUnsupported
	}
	switch {
	case len(v) != size:
		return 0, fmt.Errorf("an integer of %d bytes for a %d-byte type", len(v), size)
	case size == 8:
		return int64(binary.BigEndian.Uint64(v)), nil
	case size == 4:
		return int64(int32(binary.BigEndian.Uint32(v))), nil
	}
	return int64(int16(binary.BigEndian.Uint16(v))), nil
}

func rawBool(oid uint32, format int16, v []byte, d *bool) error {
	if oid != oidBool {
		return errRawUnsupported
	}
	if format == pgtype.TextFormatCode {
		if len(v) != 1 || v[0] != 't' && v[0] != 'f' {
			return fmt.Errorf("%q is not a bool", v)
		}
		*d = v[0] == 't'
		return nil
	}
	if len(v) != 1 {
		return fmt.Errorf("a bool of %d bytes", len(v))
	}
	*d = v[0] != 0
	return nil
}

// Postgres's binary timestamptz: microseconds since 2000-01-01 UTC, the
// extremes standing for ±infinity.
const (
	pgEpochUnix        = 946_684_800
	pgInfinity         = 1<<63 - 1
	pgNegativeInfinity = -1 << 63
)

// rawTime decodes a binary timestamptz as the store's pgx type map does
// (in UTC: store/postgres.go); an infinite one is an error, as
// rows.Scan's into a time.Time.
func rawTime(oid uint32, format int16, v []byte) (time.Time, error) {
	if oid != oidTimestamptz || format != pgtype.BinaryFormatCode {
		return time.Time{}, errRawUnsupported
	}
	if len(v) != 8 {
		return time.Time{}, fmt.Errorf("a timestamptz of %d bytes", len(v))
	}
	us := int64(binary.BigEndian.Uint64(v))
	if us == pgInfinity || us == pgNegativeInfinity {
		return time.Time{}, errors.New("an infinite time")
	}
	return time.Unix(pgEpochUnix+us/1_000_000, us%1_000_000*1000).UTC(), nil
}
