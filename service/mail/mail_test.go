package mail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/companies"
	mailsvc "holdco/service/mail"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

// company signs a user up and creates one company; it returns the user's
// context and the company.
func company(t *testing.T, e *servicetest.Env, email, name string) (context.Context, models.Company) {
	t.Helper()
	ctx, cong := e.User(t, email)
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: name})
	require.NoError(t, err)
	// A sent message costs a credit (mail.SendCredits).
	_, err = e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 1000, "test credits")
	require.NoError(t, err)
	return ctx, c
}

func adminCtx(t *testing.T, e *servicetest.Env) context.Context {
	t.Helper()
	tok, err := e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	return e.As(t, tok)
}

func TestSendDeliversFromTheCompanyAddress(t *testing.T) {
	e := servicetest.New(t)
	ada, c := company(t, e, "ada@example.com", "Acme Rockets")
	sent, err := e.Svc.Mail.Send(ada, c.ID, mailsvc.SendInput{To: "Jane <jane@example.com>", Subject: "Your order", Text: "Hello\nJane", ReplyTo: "ada@example.com"})
	require.NoError(t, err)
	assert.Equal(t, models.EmailSent, sent.Delivery)
	assert.Equal(t, c.Handle+"@mail.test", sent.FromAddress)
	assert.Equal(t, "jane@example.com", sent.ToAddress)

	raw, err := e.Mailbox.SentMessage(sent.ProviderMessageID)
	require.NoError(t, err)
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	require.NoError(t, err)
	from, err := mail.ParseAddress(m.Header.Get("From"))
	require.NoError(t, err)
	assert.Equal(t, mail.Address{Name: "Acme Rockets", Address: c.Handle + "@mail.test"}, *from)

	got, err := e.Svc.Mail.Get(ada, c.ID, sent.ID)
	require.NoError(t, err)
	assert.Equal(t, "Hello\nJane", got.TextBody)
	assert.Equal(t, models.EmailSent, got.Delivery)

	events, err := e.Store.Companies().ListActivity(context.Background(), companyScope(t, e, ada, c.ID), models.ActivityCursor{}, 50)
	require.NoError(t, err)
	var sentEvents int
	for _, ev := range events {
		if ev.Kind == models.ActivityEmailSent {
			sentEvents++
			assert.Equal(t, sent.ID, ev.Subject)
			assert.Equal(t, models.ActorUser, ev.Actor)
		}
	}
	assert.Equal(t, 1, sentEvents)

	page, err := e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{})
	require.NoError(t, err)
	assert.Equal(t, c.Handle+"@mail.test", page.Address)
	require.Len(t, page.Emails, 1)
	assert.Empty(t, page.Emails[0].TextBody, "lists carry no bodies")
}

func TestSendRefusesBadInputAndStoresNothing(t *testing.T) {
	e := servicetest.New(t)
	ada, c := company(t, e, "ada@example.com", "Acme")
	ok := mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: "Hello"}
	for name, tc := range map[string]struct {
		mutate func(*mailsvc.SendInput)
		code   models.ErrorCode
		field  string
	}{
		"no recipient":          {func(in *mailsvc.SendInput) { in.To = "" }, models.CodeInvalidArgument, "to"},
		"not an address":        {func(in *mailsvc.SendInput) { in.To = "jane" }, models.CodeInvalidArgument, "to"},
		"two recipients":        {func(in *mailsvc.SendInput) { in.To = "jane@example.com, bob@example.com" }, models.CodeInvalidArgument, "to"},
		"to injection":          {func(in *mailsvc.SendInput) { in.To = "jane@example.com\r\nBcc: x@example.com" }, models.CodeInvalidArgument, "to"},
		"subject injection":     {func(in *mailsvc.SendInput) { in.Subject = "Hi\r\nBcc: x@example.com" }, models.CodeInvalidArgument, "subject"},
		"subject LF":            {func(in *mailsvc.SendInput) { in.Subject = "Hi\nthere" }, models.CodeInvalidArgument, "subject"},
		"subject control":       {func(in *mailsvc.SendInput) { in.Subject = "Hi\x1b[31m" }, models.CodeInvalidArgument, "subject"},
		"subject too long":      {func(in *mailsvc.SendInput) { in.Subject = strings.Repeat("é", mailsvc.MaxSubjectChars+1) }, models.CodeInvalidArgument, "subject"},
		"empty subject":         {func(in *mailsvc.SendInput) { in.Subject = "" }, models.CodeInvalidArgument, "subject"},
		"reply-to injection":    {func(in *mailsvc.SendInput) { in.ReplyTo = "a@example.com\nBcc: x@example.com" }, models.CodeInvalidArgument, "reply_to"},
		"NUL in text":           {func(in *mailsvc.SendInput) { in.Text = "a\x00b" }, models.CodeInvalidArgument, "text"},
		"control in text":       {func(in *mailsvc.SendInput) { in.Text = "a\x07b" }, models.CodeInvalidArgument, "text"},
		"empty text":            {func(in *mailsvc.SendInput) { in.Text = "" }, models.CodeInvalidArgument, "text"},
		"text over the limit":   {func(in *mailsvc.SendInput) { in.Text = strings.Repeat("a", mailsvc.MaxTextBytes+1) }, models.CodeTooLarge, "text"},
		"invalid UTF-8 subject": {func(in *mailsvc.SendInput) { in.Subject = "\xff" }, models.CodeInvalidArgument, "subject"},
	} {
		t.Run(name, func(t *testing.T) {
			in := ok
			tc.mutate(&in)
			_, err := e.Svc.Mail.Send(ada, c.ID, in)
			var de *models.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.code, de.Code)
			assert.Equal(t, tc.field, de.Field)
		})
	}
	_, err := e.Svc.Mail.Send(ada, c.ID, mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: strings.Repeat("a", mailsvc.MaxTextBytes)})
	require.NoError(t, err, "exactly the limit is fine")
	n, err := e.Store.Sales().InboxCounts(context.Background(), companyScope(t, e, ada, c.ID))
	require.NoError(t, err)
	assert.Equal(t, models.InboxCounts{Total: 1, Sent: 1}, n, "refused messages were never stored")
}

func TestDailySendLimit(t *testing.T) {
	e := servicetest.New(t)
	e.Svc = e.NewServices(t, usecases.Options{Mail: mailConfig(func(c *mailsvc.Config) { c.DailySendLimit = 3 })})
	ada, c := company(t, e, "ada@example.com", "Acme")
	in := mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: "Hello"}
	for i := 0; i < 3; i++ {
		_, err := e.Svc.Mail.Send(ada, c.ID, in)
		require.NoError(t, err)
	}
	_, err := e.Svc.Mail.Send(ada, c.ID, in)
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeRateLimited, de.Code)
	assert.EqualValues(t, 3, de.Extra["limit"])

	// Another company has its own counter.
	bob, other := company(t, e, "bob@example.com", "Other")
	_, err = e.Svc.Mail.Send(bob, other.ID, in)
	require.NoError(t, err)

	e.Clock.Advance(24 * time.Hour)
	_, err = e.Svc.Mail.Send(ada, c.ID, in)
	require.NoError(t, err, "a new UTC day")
}

func TestConcurrentSendsNeverPassTheLimit(t *testing.T) {
	e := servicetest.New(t)
	e.Svc = e.NewServices(t, usecases.Options{Mail: mailConfig(func(c *mailsvc.Config) { c.DailySendLimit = 5 })})
	ada, c := company(t, e, "ada@example.com", "Acme")
	var okCount, limited atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.Svc.Mail.Send(ada, c.ID, mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: "Hello"})
			switch {
			case err == nil:
				okCount.Add(1)
			case models.IsCode(err, models.CodeRateLimited):
				limited.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 5, okCount.Load())
	assert.EqualValues(t, 7, limited.Load())
}

func TestInboxIsolation(t *testing.T) {
	e := servicetest.New(t)
	ada, c := company(t, e, "ada@example.com", "Acme")
	bob, other := company(t, e, "bob@example.com", "Other")
	sent, err := e.Svc.Mail.Send(ada, c.ID, mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: "Hello"})
	require.NoError(t, err)

	_, err = e.Svc.Mail.List(bob, c.ID, mailsvc.ListInput{})
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.Mail.Get(bob, c.ID, sent.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.Mail.Send(bob, c.ID, mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: "Hello"})
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.Mail.Get(bob, other.ID, sent.ID)
	assert.True(t, models.IsCode(err, models.CodeNotFound), "ada's message is not in bob's inbox")
	_, err = e.Svc.Mail.Get(ada, c.ID, "00000000-0000-4000-8000-000000000000")
	assert.True(t, models.IsCode(err, models.CodeNotFound))
	_, err = e.Svc.Mail.Get(ada, c.ID, "not-a-uuid")
	assert.True(t, models.IsCode(err, models.CodeNotFound))
	_, err = e.Svc.Mail.List(ada, "00000000-0000-4000-8000-000000000000", mailsvc.ListInput{})
	assert.True(t, models.IsCode(err, models.CodeNotFound))
	page, err := e.Svc.Mail.List(bob, other.ID, mailsvc.ListInput{})
	require.NoError(t, err)
	assert.Empty(t, page.Emails)
}

// deliver posts a signed inbound delivery.
func deliver(t *testing.T, e *servicetest.Env, msg map[string]any) (mailsvc.InboundResult, error) {
	t.Helper()
	body, err := json.Marshal(msg)
	require.NoError(t, err)
	ts, sig := mailsvc.Sign(servicetest.MailConfig.InboundSecret, e.Clock.Now(), body)
	return e.Svc.Mail.ReceiveInbound(context.Background(), mailsvc.InboundDelivery{Body: body, Timestamp: ts, Signature: sig})
}

func TestReceiveInboundOncePerMessageID(t *testing.T) {
	e := servicetest.New(t)
	ada, c := company(t, e, "ada@example.com", "Acme")
	msg := map[string]any{"message_id": "prov-1", "recipient": "Acme <" + strings.ToUpper(c.Handle) + "+orders@MAIL.test>", "from": "Jane <jane@example.com>",
		"subject": "Question", "text": "Do you ship?", "html": "<p>Do you ship?</p>"}
	first, err := deliver(t, e, msg)
	require.NoError(t, err)
	require.NotEmpty(t, first.EmailID)
	assert.False(t, first.Duplicate)
	for i := 0; i < 3; i++ {
		again, err := deliver(t, e, msg)
		require.NoError(t, err)
		assert.Equal(t, mailsvc.InboundResult{EmailID: first.EmailID, Duplicate: true}, again)
	}
	sc := companyScope(t, e, ada, c.ID)
	events, err := e.Store.Companies().ListActivity(context.Background(), sc, models.ActivityCursor{}, 50)
	require.NoError(t, err)
	var received []models.ActivityEvent
	for _, ev := range events {
		if ev.Kind == models.ActivityEmailReceived {
			received = append(received, ev)
		}
	}
	require.Len(t, received, 1, "four deliveries, one event")
	assert.Equal(t, first.EmailID, received[0].Subject)
	assert.Equal(t, models.ActorCustomer, received[0].Actor)
	assert.NotContains(t, received[0].Summary, "Question", "no user data in the feed's summary")
	n, err := e.Store.Sales().InboxCounts(context.Background(), sc)
	require.NoError(t, err)
	assert.Equal(t, models.InboxCounts{Total: 1, Unread: 1, Received: 1}, n)

	got, err := e.Svc.Mail.Get(ada, c.ID, first.EmailID)
	require.NoError(t, err)
	assert.Equal(t, "jane@example.com", got.FromAddress)
	assert.Equal(t, "Do you ship?", got.TextBody)
	assert.Equal(t, models.EmailBodyPresent, got.BodyState)
	require.NotNil(t, got.ReadAt, "opening marks it read")
	n, err = e.Store.Sales().InboxCounts(context.Background(), sc)
	require.NoError(t, err)
	assert.Equal(t, int64(0), n.Unread)

	// Unknown recipients are accepted and dropped; so is another domain.
	for _, rcpt := range []string{"nobody-here@mail.test", c.Handle + "@other.test", "Not_A_Handle@mail.test"} {
		res, err := deliver(t, e, map[string]any{"message_id": "prov-x-" + rcpt, "recipient": rcpt, "from": "jane@example.com", "subject": "x"})
		require.NoError(t, err)
		assert.Equal(t, mailsvc.InboundResult{Dropped: true}, res, rcpt)
	}

	// Without a body: stored, body missing.
	res, err := deliver(t, e, map[string]any{"message_id": "prov-2", "recipient": c.Handle + "@mail.test", "from": "jane@example.com", "subject": "Big"})
	require.NoError(t, err)
	got, err = e.Svc.Mail.Get(ada, c.ID, res.EmailID)
	require.NoError(t, err)
	assert.Equal(t, models.EmailBodyMissing, got.BodyState)
}

func TestReceiveInboundChecksTheSignature(t *testing.T) {
	e := servicetest.New(t)
	_, c := company(t, e, "ada@example.com", "Acme")
	body := []byte(fmt.Sprintf(`{"message_id":"p","recipient":"%s@mail.test","from":"jane@example.com","subject":"x"}`, c.Handle))
	now := e.Clock.Now()
	ts, sig := mailsvc.Sign(servicetest.MailConfig.InboundSecret, now, body)
	wrongTS, wrongSig := mailsvc.Sign([]byte("another-secret-another-secret-xx"), now, body)
	staleTS, staleSig := mailsvc.Sign(servicetest.MailConfig.InboundSecret, now.Add(-6*time.Minute), body)
	futureTS, futureSig := mailsvc.Sign(servicetest.MailConfig.InboundSecret, now.Add(6*time.Minute), body)
	for name, d := range map[string]mailsvc.InboundDelivery{
		"wrong secret":    {Body: body, Timestamp: wrongTS, Signature: wrongSig},
		"stale":           {Body: body, Timestamp: staleTS, Signature: staleSig},
		"future":          {Body: body, Timestamp: futureTS, Signature: futureSig},
		"no signature":    {Body: body, Timestamp: ts},
		"no timestamp":    {Body: body, Signature: sig},
		"other timestamp": {Body: body, Timestamp: fmt.Sprint(now.Unix() - 1), Signature: sig},
		"body changed":    {Body: append([]byte(" "), body...), Timestamp: ts, Signature: sig},
		"not hex":         {Body: body, Timestamp: ts, Signature: "v1=zz"},
		"unversioned":     {Body: body, Timestamp: ts, Signature: strings.TrimPrefix(sig, "v1=")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.Svc.Mail.ReceiveInbound(context.Background(), d)
			var de *models.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, models.CodeUnauthenticated, de.Code)
			assert.Equal(t, "The delivery's signature does not verify.", de.Detail, "one answer for every failure")
		})
	}
	// Within the tolerance, and with a rotated secret's signature beside it.
	okTS, okSig := mailsvc.Sign(servicetest.MailConfig.InboundSecret, now.Add(-4*time.Minute), body)
	_, err := e.Svc.Mail.ReceiveInbound(context.Background(), mailsvc.InboundDelivery{Body: body, Timestamp: okTS, Signature: "v1=00ff, " + okSig})
	require.NoError(t, err)

	// Valid signatures over bad content are 422.
	for name, msg := range map[string]map[string]any{
		"subject injection": {"message_id": "q1", "recipient": c.Handle + "@mail.test", "from": "jane@example.com", "subject": "x\r\nBcc: y@example.com"},
		"bad from":          {"message_id": "q3", "recipient": c.Handle + "@mail.test", "from": "jane", "subject": "x"},
		"no message id":     {"recipient": c.Handle + "@mail.test", "from": "jane@example.com", "subject": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := deliver(t, e, msg)
			assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%v", err)
		})
	}

	// Control characters in a received body are replaced, not refused.
	res, err := deliver(t, e, map[string]any{"message_id": "q2", "recipient": c.Handle + "@mail.test", "from": "jane@example.com", "subject": "x",
		"text": "page\x0cbreak\x00end\n", "html": "<p>\x1b</p>"})
	require.NoError(t, err)
	ada := e.As(t, e.WebLogin(t, "ada@example.com", "ada"))
	got, err := e.Svc.Mail.Get(ada, c.ID, res.EmailID)
	require.NoError(t, err)
	assert.Equal(t, "page\uFFFDbreak\uFFFDend\n", got.TextBody)
	assert.Equal(t, "<p>\uFFFD</p>", got.HTMLBody)

	// Without a configured secret the endpoint does not exist.
	e.Svc = e.NewServices(t, usecases.Options{Mail: mailConfig(func(c *mailsvc.Config) { c.InboundSecret = nil })})
	_, err = e.Svc.Mail.ReceiveInbound(context.Background(), mailsvc.InboundDelivery{Body: body, Timestamp: ts, Signature: sig})
	assert.True(t, models.IsCode(err, models.CodeNotFound))
}

func TestListPagesAreStableUnderEqualTimestamps(t *testing.T) {
	e := servicetest.New(t)
	ada, c := company(t, e, "ada@example.com", "Acme")
	ids := map[string]bool{}
	for i := 0; i < 7; i++ { // the clock does not move: all seven share one timestamp
		res, err := deliver(t, e, map[string]any{"message_id": fmt.Sprint("p", i), "recipient": c.Handle + "@mail.test", "from": "jane@example.com", "subject": "x", "text": "y"})
		require.NoError(t, err)
		ids[res.EmailID] = true
	}
	seen := []string{}
	in := mailsvc.ListInput{Limit: 3}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		p, err := e.Svc.Mail.List(ada, c.ID, in)
		require.NoError(t, err)
		for _, m := range p.Emails {
			seen = append(seen, m.ID)
		}
		if pages == 0 {
			// A newer message arriving between pages does not shift the rest.
			e.Clock.Advance(time.Second)
			_, err := deliver(t, e, map[string]any{"message_id": "newer", "recipient": c.Handle + "@mail.test", "from": "jane@example.com", "subject": "x"})
			require.NoError(t, err)
		}
		if p.Next == nil {
			break
		}
		in.Before, in.BeforeID = p.Next.CreatedAt, p.Next.ID
	}
	require.Len(t, seen, 7, "no message skipped or repeated")
	for i := 1; i < len(seen); i++ {
		assert.Greater(t, seen[i-1], seen[i], "equal timestamps are ordered by id, descending")
		assert.True(t, ids[seen[i]])
	}

	_, err := e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{Limit: 101})
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{BeforeID: seen[0]})
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "before_id without before")
	older, err := e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{Before: e.Clock.Now()})
	require.NoError(t, err)
	assert.Len(t, older.Emails, 7, "before alone: strictly older than the instant (the newer message is at it)")
	_, err = e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{Direction: "sideways"})
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	out, err := e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{Direction: "outbound"})
	require.NoError(t, err)
	assert.Empty(t, out.Emails)
}

// barrierBodies is the local mailbox with a rendezvous: the first fetch of
// each of two backfill runs waits for the other's, so both runs have read
// the missing rows before either writes, and they race on every row.
type barrierBodies struct {
	mailsvc.BodyFetcher
	calls atomic.Int32
	both  chan struct{} // closed by the second fetch
}

func (b *barrierBodies) FetchBody(ctx context.Context, id string) (models.EmailBody, error) {
	n := b.calls.Add(1)
	if n == 2 {
		close(b.both)
	}
	if n <= 2 {
		select {
		case <-b.both:
		case <-time.After(10 * time.Second):
			return models.EmailBody{}, fmt.Errorf("the other run never fetched")
		}
	}
	return b.BodyFetcher.FetchBody(ctx, id)
}

func TestBackfillRunsConcurrentlyWithoutLosingOrDoubleCounting(t *testing.T) {
	e := servicetest.New(t)
	ada, c := company(t, e, "ada@example.com", "Acme")
	const withBody, withoutBody = 12, 4
	missing := map[string]bool{}
	for i := 0; i < withBody+withoutBody; i++ {
		id := fmt.Sprint("prov-", i)
		if i < withBody {
			// The local provider received the full message; its webhook
			// left the body out.
			require.NoError(t, e.Mailbox.Receive(context.Background(), id, models.EmailBody{Text: "body " + id}))
		}
		res, err := deliver(t, e, map[string]any{"message_id": id, "recipient": c.Handle + "@mail.test", "from": "jane@example.com", "subject": "x"})
		require.NoError(t, err)
		missing[res.EmailID] = i < withBody
	}
	barrier := &barrierBodies{BodyFetcher: e.Mailbox, both: make(chan struct{})}
	svc := e.NewServices(t, usecases.Options{MailBodies: barrier}).Mail
	admin := adminCtx(t, e)

	_, err := svc.BackfillContent(ada, mailsvc.BackfillInput{})
	assert.True(t, models.IsCode(err, models.CodeForbidden), "operators only")

	results := make([]mailsvc.BackfillResult, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := svc.BackfillContent(admin, mailsvc.BackfillInput{})
			assert.NoError(t, err)
			results[i] = r
		}()
	}
	wg.Wait()

	updatedBy := map[string]int{}
	for _, r := range results {
		assert.Empty(t, r.Failed)
		for _, id := range r.Updated {
			updatedBy[id]++
		}
		for _, id := range r.Empty {
			assert.False(t, missing[id], "only messages without a body at the provider are empty")
		}
	}
	for id, hasBody := range missing {
		if hasBody {
			assert.Equal(t, 1, updatedBy[id], "updated by exactly one run")
		} else {
			assert.Zero(t, updatedBy[id])
		}
	}
	for i, r := range results {
		other := results[1-i]
		for _, id := range r.Skipped {
			assert.Contains(t, other.Updated, id, "skipped only because the other run stored it")
		}
	}
	assert.Equal(t, withBody, len(results[0].Updated)+len(results[1].Updated))
	assert.GreaterOrEqual(t, len(results[0].Skipped)+len(results[1].Skipped), 1, "both runs raced on the first row")
	assert.Equal(t, withoutBody, len(results[0].Empty), "both runs saw every body-less message")
	assert.Equal(t, withoutBody, len(results[1].Empty))

	// The bodies are really there, and a next run only meets the empty ones.
	for id, hasBody := range missing {
		got, err := e.Svc.Mail.Get(ada, c.ID, id)
		require.NoError(t, err)
		if hasBody {
			assert.Equal(t, models.EmailBodyPresent, got.BodyState)
			assert.True(t, strings.HasPrefix(got.TextBody, "body prov-"))
		} else {
			assert.Equal(t, models.EmailBodyMissing, got.BodyState)
		}
	}
	next, err := e.Svc.Mail.BackfillContent(admin, mailsvc.BackfillInput{})
	require.NoError(t, err)
	assert.Len(t, next.Empty, withoutBody)
	assert.Empty(t, next.Updated)
	assert.Empty(t, next.Skipped)
}

// companyScope is the store scope of a company, for reading its counts.
func companyScope(t *testing.T, e *servicetest.Env, _ context.Context, id string) store.CompanyScope {
	t.Helper()
	sc, err := e.Store.SystemCompanyScope(context.Background(), id)
	require.NoError(t, err)
	return sc
}

func mailConfig(change func(*mailsvc.Config)) mailsvc.Config {
	c := servicetest.MailConfig
	change(&c)
	return c
}

// refusingSender is a provider that refuses every message.
type refusingSender struct{}

func (refusingSender) Send(context.Context, models.OutgoingEmail) error {
	return fmt.Errorf("email: smtp send: rcpt (smtp code 550)")
}

func TestRefusedSendIsRecordedFailedAndCounts(t *testing.T) {
	e := servicetest.New(t)
	e.Svc = e.NewServices(t, usecases.Options{MailSender: refusingSender{}, Mail: mailConfig(func(c *mailsvc.Config) { c.DailySendLimit = 1 })})
	ada, c := company(t, e, "ada@example.com", "Acme")
	in := mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: "Hello"}
	_, err := e.Svc.Mail.Send(ada, c.ID, in)
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeUpstreamUnavailable, de.Code)
	page, err := e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{})
	require.NoError(t, err)
	require.Len(t, page.Emails, 1)
	assert.Equal(t, models.EmailFailed, page.Emails[0].Delivery)
	assert.Equal(t, page.Emails[0].ID, de.Extra["email_id"])
	_, err = e.Svc.Mail.Send(ada, c.ID, in)
	assert.True(t, models.IsCode(err, models.CodeRateLimited), "a refused attempt counts against the limit")
	events, err := e.Store.Companies().ListActivity(context.Background(), companyScope(t, e, ada, c.ID), models.ActivityCursor{}, 50)
	require.NoError(t, err)
	for _, ev := range events {
		assert.NotEqual(t, models.ActivityEmailSent, ev.Kind)
	}
}

// blockingSender holds every send until released, like a process that
// stops while the provider is being called.
type blockingSender struct{ release chan struct{} }

func (b blockingSender) Send(ctx context.Context, _ models.OutgoingEmail) error {
	<-b.release
	return nil
}

// A send that a stopped process left `sending` is marked `unknown` by the
// worker's sweep once it is stale, never resent; a send that does finish
// later still records its outcome.
func TestStaleSendingIsMarkedUnknown(t *testing.T) {
	e := servicetest.New(t)
	release := make(chan struct{})
	e.Svc = e.NewServices(t, usecases.Options{MailSender: blockingSender{release: release}})
	ada, c := company(t, e, "ada@example.com", "Acme")
	done := make(chan error, 1)
	go func() {
		_, err := e.Svc.Mail.Send(ada, c.ID, mailsvc.SendInput{To: "jane@example.com", Subject: "Hi", Text: "Hello"})
		done <- err
	}()
	delivery := func() models.EmailDelivery {
		page, err := e.Svc.Mail.List(ada, c.ID, mailsvc.ListInput{})
		require.NoError(t, err)
		if len(page.Emails) == 0 {
			return ""
		}
		return page.Emails[0].Delivery
	}
	require.Eventually(t, func() bool { return delivery() == models.EmailSending }, testenv.EventualBound, 10*time.Millisecond)

	sweep := func(after time.Duration) int64 {
		sw := &mailsvc.StaleSendSweeper{Store: e.Store, Now: func() time.Time { return time.Now().Add(after) }}
		n, err := sw.Sweep(context.Background())
		require.NoError(t, err)
		return n
	}
	assert.EqualValues(t, 0, sweep(time.Minute), "a send in progress is left alone")
	assert.Equal(t, models.EmailSending, delivery())
	assert.EqualValues(t, 1, sweep(mailsvc.StaleSendAfter+time.Minute))
	assert.Equal(t, models.EmailUnknown, delivery())
	assert.EqualValues(t, 0, sweep(mailsvc.StaleSendAfter+time.Minute), "marked once")

	close(release)
	require.NoError(t, <-done)
	assert.Equal(t, models.EmailSent, delivery(), "the provider's late answer still lands")
}
