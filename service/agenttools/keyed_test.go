package agenttools_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/companydb"
	"holdco/providers/gitrepo"
	"holdco/providers/stripepay"
	"holdco/service"
	"holdco/service/agenttools"
	"holdco/service/usecases"
	"holdco/testenv"
)

// linkRecorder is the Stripe adapter (against stripe-mock, which keeps no
// state) that remembers the idempotency keys of the payment links it was
// asked for, as Stripe does: a key seen before is the link made before.
type linkRecorder struct {
	*stripepay.Client
	mu    sync.Mutex
	links map[string]models.PaymentLink
}

func (r *linkRecorder) CreatePaymentLink(ctx context.Context, req models.PaymentLinkRequest) (models.PaymentLink, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.links[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		return l, nil
	}
	l, err := r.Client.CreatePaymentLink(ctx, req)
	if err == nil {
		r.links[req.IdempotencyKey] = l
	}
	return l, err
}

// countingImages counts the images it made.
type countingImages struct{ n atomic.Int64 }

func (m *countingImages) Generate(context.Context, string, string) ([]byte, error) {
	m.n.Add(1)
	return []byte("\x89PNG\r\n\x1a\nloaf"), nil
}

// A crash between a tool's effect and the turn's record of its result
// makes the activity run the same call again (same service.Call): every
// side-effecting tool finds the effect its call made — stored under the
// call's key with the effect, or checked at the provider — and makes no
// second one. Each tool runs twice with one call (the first run's result
// is lost, as in the crash); a second call of its own makes a second
// effect, so the count is the call's, not the tool's.
func TestSideEffectingToolsMakeOneEffectPerCall(t *testing.T) {
	pay := testenv.StripePayments(t, "whsec_keyed")
	links := &linkRecorder{Client: pay, links: map[string]models.PaymentLink{}}
	dbs, err := companydb.NewSQLite(t.TempDir())
	require.NoError(t, err)
	repos, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	images := &countingImages{}
	w := newWorld(t, usecases.Options{Payments: pay, Sales: links, Database: companyTools{dbs}, Repository: gitTools{repos}, Images: images})
	w.fund(t, 100)
	ctx := context.Background()
	cong := mustCong(t, w)
	account := "acct_" + uuid.NewString()[:12]
	require.NoError(t, w.e.Store.Billing().SetConnectAccount(ctx, w.e.Store.SystemConglomerateScope(cong), account))
	require.NoError(t, w.e.Store.Billing().UpdateConnectState(ctx, models.ConnectState{AccountID: account, ChargesEnabled: true, DetailsSubmitted: true}))
	_, err = dbs.Ensure(ctx, w.company)
	require.NoError(t, err)
	_, err = repos.Ensure(ctx, w.company, "Ada Tools", "tools", true)
	require.NoError(t, err)
	w.call(t, "query_database", map[string]any{"sql": "CREATE TABLE orders (id INTEGER, total INTEGER)", "mode": "read_write"}, nil)
	var product agenttools.Product
	w.call(t, "create_product", map[string]any{"name": "Sourdough box", "price_cents": 2500}, &product)

	count := func(q string, args ...any) int64 {
		var n int64
		require.NoError(t, w.e.SQL.QueryRow(w.e.Rebind(q), args...).Scan(&n))
		return n
	}
	head := func() string {
		h, err := repos.Head(ctx, w.company)
		require.NoError(t, err)
		return h
	}
	var commits atomic.Int64 // distinct heads seen after each run
	lastHead := head()
	tools := []struct {
		name    string
		args    any
		effects func() int64
	}{
		{"create_task", map[string]any{"title": "Order flour"}, func() int64 {
			return count("SELECT COUNT(*) FROM company_tasks WHERE company_id = ?", w.company)
		}},
		{"add_prospect", map[string]any{"name": "The Miller"}, func() int64 {
			return count("SELECT COUNT(*) FROM company_prospects WHERE company_id = ?", w.company)
		}},
		{"send_email", map[string]any{"to": "miller@example.com", "subject": "Flour", "text": "Ten sacks."}, func() int64 {
			return count("SELECT COUNT(*) FROM company_emails WHERE company_id = ? AND direction = ?", w.company, string(models.EmailOutbound))
		}},
		{"write_file", map[string]any{"path": "notes/plan.md", "content": "# Plan"}, func() int64 {
			return count("SELECT COUNT(*) FROM activity_events WHERE company_id = ? AND kind = ?", w.company, string(models.ActivityFileUploaded))
		}},
		{"generate_image", map[string]any{"prompt": "a loaf"}, func() int64 { return images.n.Load() }},
		{"create_product", map[string]any{"name": "Baguette", "price_cents": 400}, func() int64 {
			return count("SELECT COUNT(*) FROM company_products WHERE company_id = ?", w.company)
		}},
		{"create_payment_link", map[string]any{"product_id": product.ID}, func() int64 {
			links.mu.Lock()
			defer links.mu.Unlock()
			return int64(len(links.links))
		}},
		{"commit_repository_files", map[string]any{"message": "Landing page", "files": []map[string]any{{"path": "index.html", "content": "<h1>Ada</h1>"}}},
			func() int64 {
				if h := head(); h != lastHead {
					lastHead = h
					commits.Add(1)
				}
				return commits.Load()
			}},
		{"query_database", map[string]any{"sql": "INSERT INTO orders VALUES (1, 250)", "mode": "read_write"}, func() int64 {
			r, err := dbs.Query(ctx, w.company, "SELECT COUNT(*) FROM orders", true)
			require.NoError(t, err)
			return r.Rows[0][0].(int64)
		}},
		{"regenerate_ad", map[string]any{}, func() int64 {
			var p agenttools.AdPanel
			w.call(t, "get_ad_panel", map[string]any{}, &p)
			return p.CreativeVersion
		}},
	}
	keyed := map[string]bool{}
	for _, tool := range tools {
		keyed[tool.name] = true
		t.Run(tool.name, func(t *testing.T) {
			require.True(t, agenttools.Keyed(tool.name), "the catalog lists it as keyed")
			args, err := json.Marshal(tool.args)
			require.NoError(t, err)
			turn := uuid.NewString()
			callAs := func(key string) json.RawMessage {
				ctx := service.WithCall(w.agent, service.Call{RunID: turn, Key: key})
				res, err := w.cat.Call(ctx, w.company, tool.name, args)
				require.NoError(t, err, "%s", agenttools.ErrorJSON(err))
				return res
			}
			before := tool.effects()
			first := callAs(turn + "/tool/1/0")
			assert.Equal(t, before+1, tool.effects(), "the call's effect")
			again := callAs(turn + "/tool/1/0") // the activity after the crash
			assert.Equal(t, before+1, tool.effects(), "found, not made again")
			if tool.name != "regenerate_ad" && tool.name != "generate_image" {
				assert.JSONEq(t, string(first), string(again), "the same answer")
			}
			callAs(turn + "/tool/2/0")
			assert.Equal(t, before+2, tool.effects(), "another call is another effect")
		})
	}
	// Every tool the catalog keys is in the table.
	for _, spec := range w.cat.Specs() {
		if agenttools.Keyed(spec.Name) && spec.Name != "web_research" {
			assert.True(t, keyed[spec.Name], "%s is keyed but not tested here", spec.Name)
		}
	}
}
