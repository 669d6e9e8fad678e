package api

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The hand encoding writes what encoding/json writes (HTML not escaped,
// as huma's default format), or fails where it fails, for random values
// of every field of the company page's answer: strings with quotes,
// control characters, U+2028 and invalid UTF-8; times of any year and
// offset; floats of any size, NaN and the infinities; nil and empty
// slices, nil pointers; activity data with whitespace or not JSON. The
// values are filled by reflection, so a field added to one of these types
// is drawn here, and fails the test until its encodeJSON writes it.
func TestHandEncodingIsEncodingJSONs(t *testing.T) {
	for _, v := range []any{DashboardResponse{}, CompanyResponse{}, TaskResponse{}, ActivityEventResponse{}} {
		typ := reflect.TypeOf(v)
		t.Run(typ.Name(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				p := reflect.New(typ)
				fill(t, p.Elem(), typ.Name())
				v := p.Elem().Interface()
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(false)
				wantErr := enc.Encode(v)
				var got bytes.Buffer
				gotErr := jsonFormat.Marshal(&got, v)
				if (wantErr == nil) != (gotErr == nil) {
					t.Fatalf("encoding/json: %v; hand: %v", wantErr, gotErr)
				}
				if wantErr == nil && !bytes.Equal(want.Bytes(), got.Bytes()) {
					t.Fatalf("encoding/json:\n%s\nhand:\n%s", want.Bytes(), got.Bytes())
				}
			})
		})
	}
}

var (
	timeType         = reflect.TypeFor[time.Time]()
	activityDataType = reflect.TypeFor[ActivityData]()
	// The strings: anything, the characters encoding/json escapes, and
	// bytes that are not UTF-8.
	anyString = rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.SampledFrom([]rune{'a', '"', '\\', '\n', '\r', '\t', '\b', '\f', 0, 0x1f, 0x7f, '<', '>', '&', 'é', '\u2028', '\u2029', '\ufffd', '😀'})),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	)
	anyFloat = rapid.OneOf(rapid.Float64(), rapid.Float64Range(-1e-5, 1e-5),
		rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1e-7, 1e21, 1e20, -1.5e-300, math.NaN(), math.Inf(1), math.Inf(-1)}))
	anyTime = rapid.Custom(func(t *rapid.T) time.Time {
		// Years about -100 to 10100, offsets up to ±26 h with seconds.
		sec := rapid.Int64Range(-65_000_000_000, 256_600_000_000).Draw(t, "sec")
		tt := time.Unix(sec, rapid.Int64Range(0, 999_999_999).Draw(t, "nsec"))
		switch rapid.IntRange(0, 2).Draw(t, "zone") {
		case 0:
			return tt.UTC()
		case 1:
			return tt.In(time.FixedZone("x", rapid.IntRange(-26*3600, 26*3600).Draw(t, "offset")))
		}
		return tt.In(time.Local)
	})
	anyActivityData = rapid.OneOf(
		rapid.Just(ActivityData(nil)),
		rapid.SampledFrom([]ActivityData{ActivityData("{}"), ActivityData(`{"a":1,"b":"x y"}`), ActivityData("{ \"a\" :\n [1, 2],\t\"b\": \"x  y\" }"),
			ActivityData(`{"a":`), ActivityData("not json")}),
		rapid.Map(rapid.MapOf(rapid.String(), rapid.String()), func(m map[string]string) ActivityData {
			b, _ := json.MarshalIndent(m, "", "  ")
			return b
		}),
	)
)

// fill sets v, and everything it holds, to random values.
func fill(t *rapid.T, v reflect.Value, path string) {
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(anyTime.Draw(t, path)))
		return
	case activityDataType:
		v.Set(reflect.ValueOf(anyActivityData.Draw(t, path)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Pointer:
		if rapid.Bool().Draw(t, path+"!=nil") {
			p := reflect.New(v.Type().Elem())
			fill(t, p.Elem(), path)
			v.Set(p)
		}
	case reflect.Slice:
		n := rapid.IntRange(-1, 3).Draw(t, path+".len")
		if n < 0 {
			return // nil
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(t, s.Index(i), path+"[]")
		}
		v.Set(s)
	case reflect.String:
		v.SetString(anyString.Draw(t, path))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, path))
	case reflect.Int, reflect.Int64:
		v.SetInt(rapid.OneOf(rapid.Int64(), rapid.Int64Range(-3, 3)).Draw(t, path))
	case reflect.Float64:
		v.SetFloat(anyFloat.Draw(t, path))
	default:
		t.Fatalf("%s: fill does not draw a %s; teach it", path, v.Type())
	}
}
