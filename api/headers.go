package api

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// headerPatterns caches the compiled patterns of header schemas.
var headerPatterns sync.Map // pattern → *regexp.Regexp (nil when it does not compile)

// headerFailure checks a header's value against its schema's enum,
// pattern and length bounds, which huma does not apply to a header
// declared in an embedded struct; "" when the value passes.
func headerFailure(v string, schema *huma.Schema) (typ, msg string) {
	if schema == nil {
		return "", ""
	}
	if len(schema.Enum) > 0 {
		ok := false
		quoted := make([]string, 0, len(schema.Enum))
		for _, e := range schema.Enum {
			s := fmt.Sprint(e)
			quoted = append(quoted, "'"+s+"'")
			ok = ok || s == v
		}
		if !ok {
			return "enum", "Input should be " + oneOf(quoted)
		}
	}
	n := utf8.RuneCountInString(v)
	if schema.MaxLength != nil && n > *schema.MaxLength {
		return "string_too_long", fmt.Sprintf("String should have at most %d characters", *schema.MaxLength)
	}
	if schema.MinLength != nil && n < *schema.MinLength {
		return "string_too_short", fmt.Sprintf("String should have at least %d characters", *schema.MinLength)
	}
	if schema.Pattern != "" {
		re, _ := headerPatterns.Load(schema.Pattern)
		if re == nil {
			compiled, err := regexp.Compile(schema.Pattern)
			if err != nil {
				compiled = nil
			}
			re, _ = headerPatterns.LoadOrStore(schema.Pattern, compiled)
		}
		if re, _ := re.(*regexp.Regexp); re != nil && !re.MatchString(v) {
			return "string_pattern_mismatch", "String should match pattern '" + schema.Pattern + "'"
		}
	}
	return "", ""
}

// oneOf is Pydantic's list of choices: 'a', 'b' or 'c'.
func oneOf(quoted []string) string {
	if len(quoted) == 1 {
		return quoted[0]
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}
