package api

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// number gives an integer field an integral number in its integer
// spelling, and refuses a fractional or oversized one the way Pydantic
// does. tag is the field's (its minimum and maximum are the range an
// oversized number is told to keep to).
func (w *bodyWalker) number(n json.Number, t reflect.Type, tag reflect.StructTag, loc []any) any {
	if t == nil {
		return n
	}
	signed := false
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		signed = true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return n
	}
	// Bound the work before big-number parsing: "1e600000000" is 11 bytes
	// that would expand to a 2-billion-bit integer.
	switch magnitude(string(n)) {
	case magnitudeZero:
		w.changed = string(n) != "0"
		return json.Number("0")
	case magnitudeHuge:
		w.fail(loc, typeIntSize, "Input should be an integer from "+rangeOf(t, signed, tag))
		return n
	case magnitudeTiny:
		w.fail(loc, typeIntFromFloat, "Input should be a valid integer, got a number with a fractional part")
		return n
	}
	f, _, err := big.ParseFloat(string(n), 10, 512, big.ToNearestEven)
	if err != nil {
		return n
	}
	if !f.IsInt() {
		w.fail(loc, typeIntFromFloat, "Input should be a valid integer, got a number with a fractional part")
		return n
	}
	i, _ := f.Int(nil)
	zero := reflect.New(t).Elem()
	var fits bool
	if signed {
		fits = i.IsInt64() && !zero.OverflowInt(i.Int64())
	} else {
		fits = i.IsUint64() && !zero.OverflowUint(i.Uint64())
	}
	if !fits {
		w.fail(loc, typeIntSize, "Input should be an integer from "+rangeOf(t, signed, tag))
		return n
	}
	if s := i.String(); s != string(n) {
		w.changed = true
		return json.Number(s)
	}
	return n
}

type numberMagnitude int

const (
	magnitudeOrdinary numberMagnitude = iota
	magnitudeZero                     // every digit is 0
	magnitudeHuge                     // beyond any integer field
	magnitudeTiny                     // a non-zero number below 1
)

// maxNumberLiteral bounds an integer field's literal: the longest integer
// (20 digits and a sign) in any spelling with a short exponent fits.
const maxNumberLiteral = 64

// magnitude classifies a JSON number literal without expanding it: the
// power of ten of its leading digit decides whether it can be an integer
// field's value at all.
func magnitude(lit string) numberMagnitude {
	mant, exp, hasExp := strings.Cut(strings.ToLower(strings.TrimLeft(lit, "-")), "e")
	if !strings.ContainsAny(mant, "123456789") {
		return magnitudeZero
	}
	if len(lit) > maxNumberLiteral {
		return magnitudeHuge
	}
	whole, frac, _ := strings.Cut(mant, ".")
	var lead int // power of ten of the leading non-zero digit
	if w := strings.TrimLeft(whole, "0"); w != "" {
		lead = len(w) - 1
	} else {
		lead = -(len(frac) - len(strings.TrimLeft(frac, "0")) + 1)
	}
	e := 0
	if hasExp {
		var err error
		if e, err = strconv.Atoi(exp); err != nil { // beyond int: the sign decides
			if strings.HasPrefix(exp, "-") {
				return magnitudeTiny
			}
			return magnitudeHuge
		}
	}
	switch {
	case lead+e >= 20: // at least 1e20, beyond uint64
		return magnitudeHuge
	case lead+e < 0: // non-zero and below 1
		return magnitudeTiny
	}
	return magnitudeOrdinary
}

// rangeOf is the range of the field: its minimum and maximum tags where it
// has them (what the field takes, not what its Go type could hold), the
// type's bounds otherwise.
func rangeOf(t reflect.Type, signed bool, tag reflect.StructTag) string {
	lo, hi := new(big.Int), new(big.Int)
	bits := uint(t.Bits())
	if signed {
		lo.Lsh(big.NewInt(-1), bits-1)
		hi.Sub(new(big.Int).Lsh(big.NewInt(1), bits-1), big.NewInt(1))
	} else {
		hi.Sub(new(big.Int).Lsh(big.NewInt(1), bits), big.NewInt(1))
	}
	if m, ok := tagBound(tag, "minimum"); ok && m.Cmp(lo) > 0 && m.Cmp(hi) <= 0 {
		lo = m
	}
	if m, ok := tagBound(tag, "maximum"); ok && m.Cmp(hi) < 0 && m.Cmp(lo) >= 0 {
		hi = m
	}
	return lo.String() + " to " + hi.String()
}

// tagBound reads an integral minimum or maximum tag.
func tagBound(tag reflect.StructTag, name string) (*big.Int, bool) {
	v, ok := tag.Lookup(name)
	if !ok {
		return nil, false
	}
	return new(big.Int).SetString(strings.TrimSpace(v), 10)
}
