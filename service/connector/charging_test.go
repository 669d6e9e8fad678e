package connector_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/connector"
	"holdco/service/mail"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/service/webtools"
)

// countingSearch is a search provider that counts its searches.
type countingSearch struct{ n atomic.Int64 }

func (s *countingSearch) Search(context.Context, string, int) ([]webtools.Result, error) {
	s.n.Add(1)
	return []webtools.Result{{Title: "Flour", URL: "https://example.com/flour", Snippet: "Sacks of flour"}}, nil
}

// countingImages is an image provider that counts the images it made.
type countingImages struct{ n atomic.Int64 }

func (m *countingImages) Generate(context.Context, string, string) ([]byte, error) {
	m.n.Add(1)
	return []byte("\x89PNG\r\n\x1a\nloaf"), nil
}

// Every billable tool, from every entry point that offers it (an agent's
// turn, the connector, REST's use case as its handler calls it), is paid
// by one rule: an account short of its price gets no effect; a call is
// charged its price once, before nothing else; the same call again (an
// agent's retried activity, a client's request sent again with its
// idempotency key) makes no second effect and pays nothing more.
func TestEveryBillableToolIsChargedOnceBeforeItsEffect(t *testing.T) {
	search, images := &countingSearch{}, &countingImages{}
	e := servicetest.NewWith(t, usecases.Options{Research: search, Images: images})
	ada, cong := e.User(t, "ada@example.com")
	co := e.SeedCompany(t, ada, companies.CompanyInput{Name: "Ada Bakery"})
	conn := connector.New(connector.Deps{Core: e.Svc.Files.Core(), Companies: e.Svc.CompaniesUseCases, Billing: e.Svc.BillingUseCases,
		Turns: e.Svc.Turns, Files: e.Svc.Files, Sales: e.Svc.SalesUseCases, Tools: e.Svc.Tools})
	scope := e.Store.SystemConglomerateScope(cong)
	count := func(q string, args ...any) int64 {
		var n int64
		require.NoError(t, e.SQL.QueryRow(e.Rebind(q), args...).Scan(&n))
		return n
	}
	balance := func() int64 {
		st, err := e.Svc.Credits(ada, cong)
		require.NoError(t, err)
		return st.Balance
	}
	grant := func(n int64) {
		if n > 0 {
			_, err := e.Svc.GrantCredits(context.Background(), scope, models.EntryAdminAdjustment, n, "test credits")
			require.NoError(t, err)
		}
	}
	emails := func() int64 {
		return count("SELECT COUNT(*) FROM company_emails WHERE company_id = ? AND direction = ?", co.ID, string(models.EmailOutbound))
	}
	storedFiles := func() int64 { return count("SELECT COUNT(*) FROM company_files WHERE company_id = ?", co.ID) }

	tools := []struct {
		name string
		args string
		// effects counts what the tool did in the world.
		effects func() int64
		// rest is REST's entry point when REST offers the act.
		rest func(ctx context.Context) error
		// searchesAgain: the act leaves nothing in the world to find, so
		// the same call made again asks the provider again (unpaid).
		searchesAgain bool
	}{
		{"send_email", `{"to":"miller@example.com","subject":"Flour","text":"Ten sacks, please."}`, emails,
			func(ctx context.Context) error {
				_, err := e.Svc.Mail.Send(ctx, co.ID, mail.SendInput{To: "miller@example.com", Subject: "Flour", Text: "Ten sacks, please."})
				return err
			}, false},
		// A search changes nothing in the world: its effect is the
		// provider's work, paid once.
		{"web_research", `{"query":"flour suppliers"}`, func() int64 { return search.n.Load() }, nil, true},
		// An image made is a stored file: the same call finds it and makes
		// no other.
		{"generate_image", `{"prompt":"a loaf on a table"}`, func() int64 {
			assert.Equal(t, images.n.Load(), storedFiles(), "every image made is stored")
			return images.n.Load()
		}, nil, false},
	}
	// An entry point makes one call of the tool, named by key.
	type entry struct {
		name string
		call func(key string) error
	}
	for _, tool := range tools {
		entries := []entry{
			{"agent", func(key string) error {
				ctx := service.WithPrincipal(context.Background(), service.Principal{Credential: service.CredentialCompanyKey,
					CredentialID: "turn:" + key, CompanyID: co.ID, ConglomerateID: cong})
				ctx = service.WithCall(ctx, service.Call{RunID: key, Key: key + "/tool/1/0"}) // as the turn's ToolStep does
				_, err := e.Svc.Tools.Call(ctx, co.ID, tool.name, json.RawMessage(tool.args))
				return err
			}},
			{"connector", func(key string) error {
				_, err := conn.CallAgentTool(ada, co.Handle, tool.name, key, json.RawMessage(tool.args))
				return err
			}},
		}
		if tool.rest != nil {
			entries = append(entries, entry{"REST", func(key string) error {
				call, err := service.RequestCall(co.ID, tool.name, key, "Idempotency-Key") // as api/emails.go does
				require.NoError(t, err)
				return tool.rest(service.WithCall(ada, call))
			}})
		}
		for _, ep := range entries {
			t.Run(tool.name+"/"+ep.name, func(t *testing.T) {
				price := billing.ToolCredits(tool.name)
				require.Positive(t, price)
				require.Zero(t, balance())
				charges := func() int64 {
					return count("SELECT COUNT(*) FROM credit_ledger_entries WHERE conglomerate_id = ? AND type = ?", cong, string(models.EntryToolUsage))
				}
				before, charged := tool.effects(), charges()

				// Short of the price by one credit: refused, no effect.
				grant(price - 1)
				err := ep.call(uuid.NewString())
				assert.Equal(t, models.CodeInsufficientCredits, models.ErrorCodeOf(err), "%v", err)
				assert.Equal(t, before, tool.effects(), "no effect unpaid")
				assert.Equal(t, price-1, balance(), "nothing charged")

				// Paid: one effect, its price charged once.
				grant(1)
				key := uuid.NewString()
				require.NoError(t, ep.call(key))
				assert.Equal(t, before+1, tool.effects(), "one effect")
				assert.Zero(t, balance(), "charged its price")
				assert.Equal(t, charged+1, charges(), "one TOOL_USAGE entry")

				// The same call again: the effect is found, nothing is paid.
				require.NoError(t, ep.call(key))
				if tool.searchesAgain {
					assert.Equal(t, before+2, tool.effects(), "searched again, unpaid")
				} else {
					assert.Equal(t, before+1, tool.effects(), "no second effect")
				}
				assert.Zero(t, balance())
				assert.Equal(t, charged+1, charges(), "no second charge")
				assert.Zero(t, count("SELECT COUNT(*) FROM credit_ledger_entries WHERE conglomerate_id = ? AND type = ? AND run_id IS NULL",
					cong, string(models.EntryToolUsage)), "every charge carries its run_id")

				// A plan that has ended refuses the act first, with its
				// price in the balance: no effect, nothing charged. The
				// trial is three days.
				grant(price)
				e.Clock.Advance(4 * 24 * time.Hour)
				effects := tool.effects()
				err = ep.call(uuid.NewString())
				e.Clock.Advance(-4 * 24 * time.Hour)
				assert.Equal(t, models.CodePlanExpired, models.ErrorCodeOf(err), "%v", err)
				assert.Equal(t, effects, tool.effects(), "no effect on an ended plan")
				assert.Equal(t, price, balance(), "nothing charged on an ended plan")
				require.NoError(t, ep.call(uuid.NewString()), "the plan again in force")
				assert.Zero(t, balance())
			})
		}
	}
}

// The connector resolves a business once and hands it to the use case in
// the call's context: AuthorizeCompany answers it from there for the same
// principal (the store is not asked again: a change made since is not
// seen), and for no other principal.
func TestAnAuthorizedBusinessIsTakenFromTheCallForItsPrincipalOnly(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	bob, _ := e.User(t, "bob@example.com")
	co, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Ada Bakery"})
	require.NoError(t, err)
	core := e.Svc.Files.Core()
	ac, err := core.AuthorizeCompany(ada, co.ID, false)
	require.NoError(t, err)
	ctx := service.WithAuthorizedCompany(ada, ac)

	scope, err := e.Store.SystemCompanyScope(context.Background(), co.ID)
	require.NoError(t, err)
	_, err = e.Store.Companies().ArchiveCompany(context.Background(), scope, e.Clock.Now())
	require.NoError(t, err)

	got, err := core.AuthorizeCompany(ctx, co.ID, false)
	require.NoError(t, err, "answered from the call, without the store")
	assert.Equal(t, co.ID, got.ID)
	_, err = core.AuthorizeCompany(ada, co.ID, false)
	assert.Equal(t, models.CodeNotFound, models.ErrorCodeOf(err), "a call of its own asks the store")
	bobP, _ := service.PrincipalFrom(bob)
	_, err = core.AuthorizeCompany(service.WithPrincipal(ctx, bobP), co.ID, true)
	assert.Equal(t, models.CodeForbidden, models.ErrorCodeOf(err), "another principal is authorized again")
	_, err = core.AuthorizeCompany(ctx, uuid.NewString(), false)
	assert.Equal(t, models.CodeNotFound, models.ErrorCodeOf(err), "another company is authorized again")
}
