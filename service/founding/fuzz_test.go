package founding_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/servicetest"
)

// handleShape is a handle as the sites listener routes it
// (providers/statichost).
var handleShape = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// FuzzHandleCheck drives the handle check (and Slugify under it) with
// arbitrary text on a store where "taken" and "taken-2" are used: a
// refusal is invalid_argument at handle; an answer's normalized handle and
// suggestion have a handle's shape, normalize to themselves, Valid says
// whether the input was already normalized, and a suggestion is free.
func FuzzHandleCheck(f *testing.F) {
	for _, s := range []string{"taken", "Taken!", "Crème Brûlée Co.", "a--b", "-x-", "ＡＢＣ", "ß", "ﬁ", "İstanbul", "\u0000", "a\nb",
		"---", "日本", "x\u0301", "123", "a" + string(make([]byte, 70)), "ｔａｋｅｎ", "taken 2"} {
		f.Add(s)
	}
	e := servicetest.New(f)
	ada, cong := e.User(f, "ada@example.com")
	for _, h := range []string{"taken", "taken-2"} {
		if _, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: h, Handle: h}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, handle string) {
		slug := companies.Slugify(handle)
		if !handleShape.MatchString(slug) || companies.Slugify(slug) != slug {
			t.Fatalf("Slugify(%q) = %q: not a stable handle", handle, slug)
		}
		got, err := e.Svc.Founding.CheckHandle(ada, handle)
		if err != nil {
			var de *models.Error
			if !models.IsCode(err, models.CodeInvalidArgument) || !errors.As(err, &de) || de.Field != "handle" {
				t.Fatalf("CheckHandle(%q): %v", handle, err)
			}
			return
		}
		if got.Normalized != slug || got.Valid != (slug == handle) {
			t.Fatalf("CheckHandle(%q) = %+v", handle, got)
		}
		if !handleShape.MatchString(got.Suggestion) {
			t.Fatalf("suggestion %q is not a handle", got.Suggestion)
		}
		taken, err := e.Store.Companies().HandleTaken(context.Background(), got.Suggestion)
		if err != nil || taken {
			t.Fatalf("suggestion %q is taken (%v)", got.Suggestion, err)
		}
		if got.Available != (got.Suggestion == got.Normalized) {
			t.Fatalf("available %v with suggestion %q for %q", got.Available, got.Suggestion, got.Normalized)
		}
	})
}
