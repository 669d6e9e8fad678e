package connector_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/connector"
	"holdco/service/mail"
	"holdco/service/servicetest"
)

// A billable tool is paid by one rule wherever it is called: the
// connector and REST hold its price before the effect, so an account
// short of credits gets no effect, even under concurrent calls, and every
// charge carries a run_id.
func TestBillableToolIsPaidBeforeItsEffectEverywhere(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	co := e.SeedCompany(t, ada, companies.CompanyInput{Name: "Ada Bakery"})
	grant := func(n int64) {
		_, err := e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, n, "test credits")
		require.NoError(t, err)
	}
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
	conn := connector.New(connector.Deps{Core: e.Svc.Files.Core(), Companies: e.Svc.CompaniesUseCases, Billing: e.Svc.BillingUseCases,
		Turns: e.Svc.Turns, Files: e.Svc.Files, Sales: e.Svc.SalesUseCases, Tools: e.Svc.Tools})
	args, _ := json.Marshal(map[string]string{"to": "customer@example.com", "subject": "Hello", "text": "Fresh bread."})

	// The connector: one credit, eight concurrent sends, one goes out.
	grant(1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[models.ErrorCode]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := conn.CallAgentTool(ada, co.Handle, "send_email", "", args)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				codes[models.ErrorCodeOf(err)]++
			} else {
				codes["ok"]++
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, codes["ok"], "one send succeeded: %v", codes)
	assert.Equal(t, 7, codes[models.CodeInsufficientCredits], "the others were refused before sending: %v", codes)
	assert.Equal(t, int64(1), count("SELECT COUNT(*) FROM company_emails WHERE company_id = ? AND direction = ?", co.ID, string(models.EmailOutbound)))
	assert.Equal(t, int64(0), balance())

	// REST's send (the same use case): the same price, refused unpaid.
	_, err := e.Svc.Mail.Send(ada, co.ID, mail.SendInput{To: "customer@example.com", Subject: "Again", Text: "More bread."})
	assert.Equal(t, models.CodeInsufficientCredits, models.ErrorCodeOf(err))
	assert.Equal(t, int64(1), count("SELECT COUNT(*) FROM company_emails WHERE company_id = ? AND direction = ?", co.ID, string(models.EmailOutbound)),
		"nothing stored or sent")
	grant(1)
	sent, err := e.Svc.Mail.Send(ada, co.ID, mail.SendInput{To: "customer@example.com", Subject: "Again", Text: "More bread."})
	require.NoError(t, err)
	assert.Equal(t, int64(0), balance(), "a sent message costs %d credit through REST too", mail.SendCredits)
	assert.Equal(t, int64(1), count("SELECT COUNT(*) FROM credit_ledger_entries WHERE run_id = ? AND type = ? AND amount = -1", sent.ID, string(models.EntryToolUsage)),
		"charged with the message's id as run_id")
	assert.Equal(t, int64(0), count("SELECT COUNT(*) FROM credit_ledger_entries WHERE conglomerate_id = ? AND type = ? AND run_id IS NULL", cong, string(models.EntryToolUsage)),
		"no charge without a run_id")
	assert.Equal(t, int64(2), count("SELECT COUNT(*) FROM credit_ledger_entries WHERE conglomerate_id = ? AND type = ?", cong, string(models.EntryToolUsage)))
}
