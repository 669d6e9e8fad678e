package companies_test

import (
	"testing"

	"holdco/service/companies"
)

// Slugify lowers the case after the compatibility decomposition: a
// modifier capital decomposes to an ASCII capital (FuzzHandleCheck found
// "ᴶ" becoming "J", a handle the sites listener does not route).
func TestSlugifyLowersTheCaseAfterDecomposing(t *testing.T) {
	for in, want := range map[string]string{
		"ᴶ":               "j",
		"Crème Brûlée":    "creme-brulee",
		"ＡＢＣ":             "abc",
		"İstanbul":        "istanbul",
		"ᴬᴮ ᶜᴰ":           "ab-cd",
		"Kelvin \u212a 9": "kelvin-k-9",
	} {
		if got := companies.Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}
