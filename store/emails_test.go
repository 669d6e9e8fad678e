package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

func TestEmailMethodsRefuseAZeroScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	var co store.CompanyScope
	var admin store.AdminScope
	for name, call := range map[string]func() error{
		"ReserveOutgoingEmail": func() error {
			_, err := s.Sales().ReserveOutgoingEmail(ctx, co, models.Email{ProviderMessageID: "x"}, time.Now(), 10)
			return err
		},
		"SetEmailDelivery":   func() error { return s.Sales().SetEmailDelivery(ctx, co, uuid.NewString(), models.EmailSent, nil) },
		"ListEmails":         func() error { _, err := s.Sales().ListEmails(ctx, co, store.EmailQuery{Limit: 1}); return err },
		"GetEmail":           func() error { _, err := s.Sales().GetEmail(ctx, co, uuid.NewString(), nil); return err },
		"InboxCounts":        func() error { _, err := s.Sales().InboxCounts(ctx, co); return err },
		"MissingEmailBodies": func() error { _, err := s.Sales().MissingEmailBodies(ctx, admin, 1); return err },
		"FillEmailBody": func() error {
			_, err := s.Sales().FillEmailBody(ctx, admin, uuid.NewString(), models.EmailBody{Text: "x"})
			return err
		},
	} {
		assert.ErrorIs(t, call(), store.ErrNoScope, name)
	}
}

func TestEmailsStayWithTheirCompany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	_, aliceCo := signUp(t, s, "alice")
	_, bobCo := signUp(t, s, "bob")
	a, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(aliceCo.ID), models.Company{Name: "A", Handle: handle("a")})
	require.NoError(t, err)
	b, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(bobCo.ID), models.Company{Name: "B", Handle: handle("b")})
	require.NoError(t, err)
	as, bs := systemScope(t, s, a.ID), systemScope(t, s, b.ID)

	received := models.ActivityInput{Kind: models.ActivityEmailReceived, Summary: "Email received"}
	// The same provider message id reaches both companies: once each.
	in := models.Email{ProviderMessageID: "shared-id", FromAddress: "jane@example.com", Subject: "x", BodyState: models.EmailBodyMissing}
	ea, delivered, err := s.Sales().DeliverInboundEmail(ctx, a.Handle, in, received)
	require.NoError(t, err)
	assert.True(t, delivered)
	eb, delivered, err := s.Sales().DeliverInboundEmail(ctx, b.Handle, in, received)
	require.NoError(t, err)
	assert.True(t, delivered)
	again, delivered, err := s.Sales().DeliverInboundEmail(ctx, a.Handle, in, received)
	require.NoError(t, err)
	assert.False(t, delivered)
	assert.Equal(t, ea.ID, again.ID)

	sent, err := s.Sales().ReserveOutgoingEmail(ctx, as, models.Email{ProviderMessageID: "out-1", ToAddress: "jane@example.com"}, time.Now().Add(-time.Hour), 5)
	require.NoError(t, err)
	require.NoError(t, s.Sales().SetEmailDelivery(ctx, as, sent.ID, models.EmailSent, &models.ActivityInput{Kind: models.ActivityEmailSent, Summary: "Email sent"}))
	assert.ErrorIs(t, s.Sales().SetEmailDelivery(ctx, bs, sent.ID, models.EmailFailed, nil), models.ErrNotFound, "another company's message")

	_, err = s.Sales().GetEmail(ctx, bs, ea.ID, nil)
	assert.ErrorIs(t, err, models.ErrNotFound)
	list, err := s.Sales().ListEmails(ctx, bs, store.EmailQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, eb.ID, list[0].ID)

	events, err := s.Companies().ListActivity(ctx, as, models.ActivityCursor{}, 50)
	require.NoError(t, err)
	kinds := map[models.ActivityKind]int{}
	for _, ev := range events {
		kinds[ev.Kind]++
	}
	assert.Equal(t, 1, kinds[models.ActivityEmailReceived], "a redelivery records no second event")
	assert.Equal(t, 1, kinds[models.ActivityEmailSent])

	n, err := s.Sales().InboxCounts(ctx, as)
	require.NoError(t, err)
	assert.Equal(t, models.InboxCounts{Total: 2, Unread: 1, Received: 1, Sent: 1}, n)
	n, err = s.Sales().InboxCounts(ctx, bs)
	require.NoError(t, err)
	assert.Equal(t, models.InboxCounts{Total: 1, Unread: 1, Received: 1}, n)

	// Fill happens once; a second fill of the same row reports false.
	admin := s.SystemAdminScope()
	ok, err := s.Sales().FillEmailBody(ctx, admin, ea.ID, models.EmailBody{Text: "first"})
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.Sales().FillEmailBody(ctx, admin, ea.ID, models.EmailBody{Text: "second"})
	require.NoError(t, err)
	assert.False(t, ok)
	got, err := s.Sales().GetEmail(ctx, as, ea.ID, nil)
	require.NoError(t, err)
	assert.Equal(t, "first", got.TextBody)
	assert.Equal(t, models.EmailBodyPresent, got.BodyState)

	// An archived company receives nothing.
	_, err = s.Companies().ArchiveCompany(ctx, bs, time.Now())
	require.NoError(t, err)
	_, _, err = s.Sales().DeliverInboundEmail(ctx, b.Handle, models.Email{ProviderMessageID: "late", BodyState: models.EmailBodyMissing}, received)
	assert.ErrorIs(t, err, models.ErrNotFound)
}
