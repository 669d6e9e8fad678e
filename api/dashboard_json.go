package api

// The company page's answer and its parts encode themselves (jsonenc.go):
// the same bytes as encoding/json, field by field in declaration order.

func (d DashboardResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"company":`)
	d.Company.encodeJSON(e)
	e.raw(`,"resources":`)
	d.Resources.encodeJSON(e)
	e.raw(`,"credits":`)
	d.Credits.encodeJSON(e)
	e.raw(`,"recent_activity":`)
	list(e, d.RecentActivity, (*ActivityEventResponse).encodeJSON)
	e.raw(`,"documents":`)
	list(e, d.Documents, (*DocumentSummaryResponse).encodeJSON)
	e.raw(`,"documents_more":`)
	e.bool(d.DocumentsMore)
	e.raw(`,"milestones":`)
	d.Milestones.encodeJSON(e)
	e.raw(`,"files":`)
	d.Files.encodeJSON(e)
	e.raw(`,"inbox":`)
	d.Inbox.encodeJSON(e)
	e.raw(`,"revenue":`)
	d.Revenue.encodeJSON(e)
	e.raw(`,"open_tasks":`)
	list(e, d.OpenTasks, (*TaskResponse).encodeJSON)
	e.raw(`,"last_turn":`)
	orNull(e, d.LastTurn)
	e.raw(`,"analytics":`)
	orNull(e, d.Analytics)
	e.raw(`,"domain":`)
	orNull(e, d.Domain)
	e.raw(`,"ads":`)
	orNull(e, d.Ads)
	e.raw(`}`)
}

// orNull encodes what p points to, null for nil.
func orNull[T jsonEncoder](e *jsonEnc, p *T) {
	if p == nil {
		e.null()
		return
	}
	(*p).encodeJSON(e)
}

func (c CompanyResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"id":`)
	e.str(c.ID)
	e.raw(`,"conglomerate_id":`)
	e.strPtr(c.ConglomerateID)
	e.raw(`,"name":`)
	e.str(c.Name)
	e.raw(`,"handle":`)
	e.str(c.Handle)
	e.raw(`,"status":`)
	e.str(c.Status)
	e.raw(`,"idea":`)
	e.str(c.Idea)
	e.raw(`,"mission":`)
	e.str(c.Mission)
	e.raw(`,"agent_chat":`)
	e.bool(c.AgentChat)
	e.raw(`,"generation":`)
	e.int(int64(c.Generation))
	e.raw(`,"created_at":`)
	e.time(c.CreatedAt)
	e.raw(`,"updated_at":`)
	e.time(c.UpdatedAt)
	e.raw(`,"archived_at":`)
	e.timePtr(c.ArchivedAt)
	e.raw(`}`)
}

func (r CompanyResourcesResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"ready":`)
	e.bool(r.Ready)
	e.raw(`,"resources":`)
	list(e, r.Resources, (*CompanyResourceResponse).encodeJSON)
	e.raw(`}`)
}

func (r CompanyResourceResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"kind":`)
	e.str(r.Kind)
	e.raw(`,"status":`)
	e.str(r.Status)
	if r.Ref != "" {
		e.raw(`,"ref":`)
		e.str(r.Ref)
	}
	if r.ErrorClass != "" {
		e.raw(`,"error_class":`)
		e.str(r.ErrorClass)
	}
	if r.LastError != "" {
		e.raw(`,"last_error":`)
		e.str(r.LastError)
	}
	e.raw(`,"attempts":`)
	e.int(int64(r.Attempts))
	e.raw(`,"updated_at":`)
	e.timePtr(r.UpdatedAt)
	e.raw(`}`)
}

func (c DashboardCredits) encodeJSON(e *jsonEnc) {
	e.raw(`{"balance":`)
	e.int(c.Balance)
	e.raw(`,"spent_today":`)
	e.int(c.SpentToday)
	e.raw(`,"daily_credit_cap":`)
	e.intPtr(c.DailyCreditCap)
	e.raw(`}`)
}

func (a ActivityEventResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"id":`)
	e.str(a.ID)
	e.raw(`,"kind":`)
	e.str(a.Kind)
	e.raw(`,"actor":`)
	e.str(a.Actor)
	e.raw(`,"summary":`)
	e.str(a.Summary)
	e.raw(`,"subject":`)
	e.str(a.Subject)
	e.raw(`,"data":`)
	data, _ := a.Data.MarshalJSON()
	e.rawObject(data)
	e.raw(`,"created_at":`)
	e.time(a.CreatedAt)
	e.raw(`}`)
}

func (d DocumentSummaryResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"document_type":`)
	e.str(d.DocumentType)
	e.raw(`,"title":`)
	e.str(d.Title)
	e.raw(`,"visibility":`)
	e.str(d.Visibility)
	e.raw(`,"size_bytes":`)
	e.int(d.SizeBytes)
	e.raw(`,"revision":`)
	e.int(d.Revision)
	e.raw(`,"updated_by":`)
	e.str(d.UpdatedBy)
	e.raw(`,"updated_at":`)
	e.time(d.UpdatedAt)
	e.raw(`}`)
}

func (m MilestonesResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"achieved":`)
	list(e, m.Achieved, (*MilestoneResponse).encodeJSON)
	e.raw(`,"unseen":`)
	list(e, m.Unseen, (*MilestoneResponse).encodeJSON)
	e.raw(`,"next_goal":`)
	orNull(e, m.NextGoal)
	e.raw(`}`)
}

func (m MilestoneResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"kind":`)
	e.str(m.Kind)
	e.raw(`,"goal":`)
	e.str(m.Goal)
	e.raw(`,"reached_at":`)
	e.time(m.ReachedAt)
	e.raw(`,"seen_at":`)
	e.timePtr(m.SeenAt)
	e.raw(`}`)
}

func (g MilestoneGoalResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"kind":`)
	e.str(g.Kind)
	e.raw(`,"goal":`)
	e.str(g.Goal)
	e.raw(`}`)
}

func (f DashboardFiles) encodeJSON(e *jsonEnc) {
	e.raw(`{"file_count":`)
	e.int(f.FileCount)
	e.raw(`,"used_bytes":`)
	e.int(f.UsedBytes)
	e.raw(`,"quota_bytes":`)
	e.int(f.QuotaBytes)
	e.raw(`,"max_file_bytes":`)
	e.int(f.MaxFileBytes)
	e.raw(`}`)
}

func (i DashboardInbox) encodeJSON(e *jsonEnc) {
	e.raw(`{"address":`)
	e.str(i.Address)
	e.raw(`,"total":`)
	e.int(i.Total)
	e.raw(`,"unread":`)
	e.int(i.Unread)
	e.raw(`,"received":`)
	e.int(i.Received)
	e.raw(`,"sent":`)
	e.int(i.Sent)
	e.raw(`}`)
}

func (r DashboardRevenue) encodeJSON(e *jsonEnc) {
	e.raw(`{"currency":`)
	e.str(r.Currency)
	e.raw(`,"balance_cents":`)
	e.int(r.BalanceCents)
	e.raw(`,"lifetime_earnings_cents":`)
	e.int(r.LifetimeEarningsCents)
	e.raw(`,"refunded_cents":`)
	e.int(r.RefundedCents)
	e.raw(`,"payments":`)
	e.int(r.Payments)
	e.raw(`}`)
}

func (t TaskResponse) encodeJSON(e *jsonEnc) {
	e.raw(`{"id":`)
	e.str(t.ID)
	e.raw(`,"company_id":`)
	e.str(t.CompanyID)
	e.raw(`,"title":`)
	e.str(t.Title)
	e.raw(`,"description":`)
	e.str(t.Description)
	e.raw(`,"status":`)
	e.str(t.Status)
	e.raw(`,"priority":`)
	e.str(t.Priority)
	e.raw(`,"created_by":`)
	e.str(t.CreatedBy)
	e.raw(`,"due_at":`)
	e.timePtr(t.DueAt)
	e.raw(`,"last_run_id":`)
	e.strPtr(t.LastRunID)
	e.raw(`,"failure_reason":`)
	e.strPtr(t.FailureReason)
	e.raw(`,"created_at":`)
	e.time(t.CreatedAt)
	e.raw(`,"updated_at":`)
	e.time(t.UpdatedAt)
	e.raw(`}`)
}

func (t DashboardTurn) encodeJSON(e *jsonEnc) {
	e.raw(`{"turn_id":`)
	e.str(t.TurnID)
	e.raw(`,"status":`)
	e.str(t.Status)
	e.raw(`,"trigger":`)
	e.str(t.Trigger)
	e.raw(`,"question":`)
	e.strPtr(t.Question)
	e.raw(`,"credits_cost":`)
	e.intPtr(t.CreditsCost)
	e.raw(`,"created_at":`)
	e.time(t.CreatedAt)
	e.raw(`,"ended_at":`)
	e.timePtr(t.EndedAt)
	e.raw(`}`)
}

func (a DashboardAnalytics) encodeJSON(e *jsonEnc) {
	e.raw(`{"range":`)
	e.str(a.Range)
	e.raw(`,"visitors":`)
	a.Visitors.encodeJSON(e)
	e.raw(`,"pageviews":`)
	a.Pageviews.encodeJSON(e)
	e.raw(`,"sessions":`)
	a.Sessions.encodeJSON(e)
	e.raw(`,"bounce_rate":`)
	a.BounceRate.encodeJSON(e)
	e.raw(`}`)
}

func (m AnalyticsMetric) encodeJSON(e *jsonEnc) {
	e.raw(`{"value":`)
	e.float(m.Value)
	e.raw(`,"previous":`)
	e.float(m.Previous)
	e.raw(`,"change":`)
	e.floatPtr(m.Change)
	e.raw(`}`)
}

func (d DashboardDomain) encodeJSON(e *jsonEnc) {
	e.raw(`{"domain_purchase_id":`)
	e.str(d.DomainPurchaseID)
	e.raw(`,"domain":`)
	e.str(d.Domain)
	e.raw(`,"status":`)
	e.str(d.Status)
	e.raw(`}`)
}

func (a DashboardAds) encodeJSON(e *jsonEnc) {
	e.raw(`{"daily_cap":`)
	e.int(a.DailyCap)
	e.raw(`,"state":`)
	e.str(a.State)
	e.raw(`,"total_spent":`)
	e.int(a.TotalSpent)
	e.raw(`,"total_clicks":`)
	e.int(a.TotalClicks)
	e.raw(`,"has_creative":`)
	e.bool(a.HasCreative)
	e.raw(`}`)
}
