package documents_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/documents"
	"holdco/service/servicetest"
)

func codeOf(t *testing.T, err error) models.ErrorCode {
	t.Helper()
	var de *models.Error
	require.ErrorAs(t, err, &de)
	return de.Code
}

func TestDocumentRulesAndOwnership(t *testing.T) {
	e := servicetest.New(t)
	ada, adaCong := e.User(t, "ada@example.com")
	bob, _ := e.User(t, "bob@example.com")
	co, err := e.Svc.CreateCompany(ada, adaCong, companies.CompanyInput{Name: "Ada Docs"})
	require.NoError(t, err)
	docs := e.Svc.Documents

	d, created, err := docs.Upsert(ada, co.ID, models.DocFoundingPlan, documents.UpsertInput{Content: "# Plan\n\n\tStep one.\r\n"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "Founding plan", d.Title, "the default title is the type's name")
	assert.Equal(t, models.DocumentVisible, d.Visibility)
	assert.Equal(t, models.ActorUser, d.UpdatedBy)

	// The agents (the company key) write internal notes by default.
	key, err := e.Svc.CompanyAPIKey(ada, co.ID)
	require.NoError(t, err)
	agent := e.As(t, key.Key)
	d, _, err = docs.Upsert(agent, co.ID, "agent_scratchpad", documents.UpsertInput{Content: "todo", Title: "Scratch"})
	require.NoError(t, err)
	assert.Equal(t, models.DocumentInternal, d.Visibility)
	assert.Equal(t, models.ActorAgent, d.UpdatedBy)

	list, err := docs.List(ada, co.ID, documents.ListInput{})
	require.NoError(t, err)
	require.Len(t, list, 1, "internal documents are not listed")
	assert.Equal(t, models.DocFoundingPlan, list[0].DocumentType)
	got, err := docs.Get(ada, co.ID, "agent_scratchpad")
	require.NoError(t, err, "an internal document is readable by type")
	assert.Equal(t, "todo", got.Content)

	// Bad input is refused before anything is stored.
	for name, tc := range map[string]struct {
		docType string
		in      documents.UpsertInput
		code    models.ErrorCode
	}{
		"upper-case type":    {"Strategy", documents.UpsertInput{Content: "x"}, models.CodeInvalidArgument},
		"type with a slash":  {"a/b", documents.UpsertInput{Content: "x"}, models.CodeInvalidArgument},
		"type too long":      {strings.Repeat("a", 65), documents.UpsertInput{Content: "x"}, models.CodeInvalidArgument},
		"NUL in content":     {"brand", documents.UpsertInput{Content: "a\x00b"}, models.CodeInvalidArgument},
		"escape in content":  {"brand", documents.UpsertInput{Content: "a\x1bb"}, models.CodeInvalidArgument},
		"newline in title":   {"brand", documents.UpsertInput{Content: "x", Title: "a\nb"}, models.CodeInvalidArgument},
		"unknown visibility": {"brand", documents.UpsertInput{Content: "x", Visibility: "public"}, models.CodeInvalidArgument},
		"too large":          {"brand", documents.UpsertInput{Content: strings.Repeat("é", models.MaxDocumentBytes/2+1)}, models.CodeTooLarge},
	} {
		_, _, err := docs.Upsert(ada, co.ID, tc.docType, tc.in)
		assert.Equal(t, tc.code, codeOf(t, err), name)
	}
	_, err = docs.Get(ada, co.ID, models.DocBrand)
	assert.Equal(t, models.CodeNotFound, codeOf(t, err), "nothing was stored")
	_, _, err = docs.Upsert(ada, co.ID, models.DocBrand, documents.UpsertInput{Content: strings.Repeat("a", models.MaxDocumentBytes)})
	require.NoError(t, err, "exactly the limit is fine")

	var de *models.Error
	_, _, err = docs.Upsert(ada, co.ID, models.DocBrand, documents.UpsertInput{Content: strings.Repeat("a", models.MaxDocumentBytes+1)})
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.MaxDocumentBytes+1, de.Extra["size_bytes"])
	assert.Equal(t, models.MaxDocumentBytes, de.Extra["limit_bytes"])

	// Another account: 403 on every operation, before looking at the type.
	_, err = docs.Get(bob, co.ID, models.DocFoundingPlan)
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))
	_, _, err = docs.Upsert(bob, co.ID, models.DocFoundingPlan, documents.UpsertInput{Content: "mine now"})
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))
	assert.Equal(t, models.CodeForbidden, codeOf(t, docs.Delete(bob, co.ID, models.DocFoundingPlan)))
	_, err = docs.List(bob, co.ID, documents.ListInput{})
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))

	require.NoError(t, docs.Delete(ada, co.ID, models.DocFoundingPlan))
	assert.Equal(t, models.CodeNotFound, codeOf(t, docs.Delete(ada, co.ID, models.DocFoundingPlan)))

	// Every change is in the feed, by who made it.
	page, err := e.Svc.Activity(ada, co.ID, companies.ActivityInput{})
	require.NoError(t, err)
	kinds := map[models.ActivityKind]int{}
	actors := map[models.ActivityActor]int{}
	for _, ev := range page.Events {
		kinds[ev.Kind]++
		actors[ev.Actor]++
	}
	assert.Equal(t, 3, kinds[models.ActivityDocumentUpdated])
	assert.Equal(t, 1, kinds[models.ActivityDocumentDeleted])
	assert.Equal(t, 1, kinds[models.ActivityCompanyCreated])
	assert.Equal(t, 1, actors[models.ActorAgent])
}

func TestActivityPagingAndLimits(t *testing.T) {
	e := servicetest.New(t)
	ada, adaCong := e.User(t, "ada@example.com")
	bob, _ := e.User(t, "bob@example.com")
	co, err := e.Svc.CreateCompany(ada, adaCong, companies.CompanyInput{Name: "Ada Feed"})
	require.NoError(t, err)
	for i := range 5 {
		_, _, err := e.Svc.Documents.Upsert(ada, co.ID, "note-"+string(rune('a'+i)), documents.UpsertInput{Content: "x"})
		require.NoError(t, err)
	}
	seen := map[string]bool{}
	in := companies.ActivityInput{Limit: 2}
	pages := 0
	for {
		page, err := e.Svc.Activity(ada, co.ID, in)
		require.NoError(t, err)
		pages++
		for _, ev := range page.Events {
			assert.False(t, seen[ev.ID], "an event appears once")
			seen[ev.ID] = true
		}
		if page.Next == nil {
			break
		}
		in.Before, in.BeforeID = page.Next.Before, page.Next.BeforeID
	}
	assert.Len(t, seen, 6, "five documents and the company's creation")
	assert.Equal(t, 3, pages)

	for _, limit := range []int{-1, 101} {
		_, err := e.Svc.Activity(ada, co.ID, companies.ActivityInput{Limit: limit})
		assert.Equal(t, models.CodeInvalidArgument, codeOf(t, err))
	}
	_, err = e.Svc.Activity(bob, co.ID, companies.ActivityInput{})
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))

	shelf, err := e.Svc.Milestones(ada, co.ID)
	require.NoError(t, err)
	assert.Empty(t, shelf.Achieved)
	require.NotNil(t, shelf.NextGoal)
	assert.Equal(t, models.MilestoneFirstDollar, *shelf.NextGoal)
}
