package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// badUnicodeStrings returns the locations (within the JSON document raw,
// which decodes) of the strings, object keys included, that are not
// Unicode text: raw bytes that are not UTF-8 (an encoded surrogate among
// them) or a \u escape of a lone surrogate. encoding/json would hand
// either on as U+FFFD, silently changing what the client sent. A key's
// location is the key itself.
func badUnicodeStrings(raw []byte) [][]any {
	if utf8.Valid(raw) && !bytes.Contains(raw, []byte(`\u`)) {
		return nil // the common case: no string can be bad
	}
	type frame struct {
		object    bool
		expectKey bool
		key       string
		index     int
	}
	var (
		stack []frame
		bad   [][]any
	)
	here := func() []any {
		loc := make([]any, 0, len(stack))
		for _, f := range stack {
			if f.object {
				loc = append(loc, f.key)
			} else {
				loc = append(loc, f.index)
			}
		}
		return loc
	}
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].expectKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return bad // the end (or a syntax error huma reports)
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, expectKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				afterValue()
			}
			continue
		case string:
			literal := raw[before:dec.InputOffset()]
			ok := validJSONString(literal[bytes.IndexByte(literal, '"'):])
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				stack[n-1].key, stack[n-1].expectKey = t, false
				if !ok {
					bad = append(bad, here())
				}
				continue
			}
			if !ok {
				bad = append(bad, here())
			}
		}
		afterValue()
	}
}

// validJSONString reports whether a JSON string literal (with its quotes)
// holds only Unicode text: its raw bytes are UTF-8 and every \u escape of
// a surrogate is half of a pair.
func validJSONString(lit []byte) bool {
	if len(lit) < 2 {
		return false
	}
	s := lit[1 : len(lit)-1]
	if !utf8.Valid(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++
		if i >= len(s) || s[i] != 'u' {
			continue
		}
		r, ok := hex4(s, i+1)
		if !ok {
			return false
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low half alone
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return false // a high half alone
			}
			lo, ok := hex4(s, i+3)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 reads the four hex digits at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s[i:i+4]), 16, 32)
	return rune(n), err == nil
}
