package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// Errors of ApplyCreditEntry; the outcome carries the numbers.
var (
	ErrInsufficientCredits = errors.New("store: insufficient credits")
	ErrDailyCapReached     = errors.New("store: daily credit cap reached")
)

// CreditOutcome is the account after (or, when refused, before) an entry.
type CreditOutcome struct {
	Balance    int64
	SpentToday int64 // credits spent since dayStart, this entry included when applied
	// Held is what live reservations (other than the entry's own) hold of
	// the balance: a spend can use Balance-Held.
	Held int64
	// Charged is what a spend took (SettleCreditEntry may take less than
	// asked); 0 when nothing was written.
	Charged int64
	// Woken are the account's ad campaigns a grant (a positive entry)
	// marked to resume: they waited for credits. Their marks commit with
	// the grant; whoever can signals their reconcilers after the commit
	// (billing with a Temporal client), the growth sweeper otherwise.
	Woken []PendingAdCampaign
}

// GroupKey is the page group of an entry: usage entries of one run sum
// into one line per type; everything else stands alone.
func GroupKey(e models.CreditLedgerEntry) string {
	if e.RunID != nil && (e.Type == models.EntryTokenUsagePartial || e.Type == models.EntryToolUsage) {
		return string(e.Type) + ":" + *e.RunID
	}
	return "entry:" + e.ID
}

// ApplyCreditEntry appends an entry, updates its page group and the
// balance, in one transaction serialized per conglomerate (a row lock on
// Postgres; SQLite transactions are IMMEDIATE). An entry whose id is a
// reservation's settles it (the reservation is removed in the same
// transaction). A spend (negative amount) that would take the balance
// minus the other live reservations below zero is refused with
// ErrInsufficientCredits, and a spend over dailyCap (credits per UTC day
// since dayStart) with ErrDailyCapReached; nothing is written then. The
// cap was checked for what a live reservation holds when it was made, so
// a spend that settles one for no more than it holds is never refused by
// the cap (it was lowered meanwhile, say): the work it pays for is done. A
// second welcome grant fails with models.ErrDuplicate. The scope's
// conglomerate wins over e.ConglomerateID. A grant (a positive amount)
// marks, in the same transaction, the account's ad campaigns waiting for
// credits to resume (CreditOutcome.Woken): a grant wakes them whichever
// process made it.
func (s Billing) ApplyCreditEntry(ctx context.Context, cong ConglomerateScope, e models.CreditLedgerEntry, dailyCap *int64, dayStart time.Time) (CreditOutcome, error) {
	return s.applyCreditEntry(ctx, cong, e, dailyCap, dayStart, false)
}

// SettleCreditEntry is ApplyCreditEntry for the charge of work already
// done (a model call, whose price is known only after it ran): a spend
// the balance or the cap cannot take in full takes what they allow, and
// at least what the entry's own live reservation holds, and returns
// ErrInsufficientCredits or ErrDailyCapReached (whichever bound it)
// after committing that; CreditOutcome.Charged says what was taken (0:
// nothing was written).
func (s Billing) SettleCreditEntry(ctx context.Context, cong ConglomerateScope, e models.CreditLedgerEntry, dailyCap *int64, dayStart time.Time) (CreditOutcome, error) {
	return s.applyCreditEntry(ctx, cong, e, dailyCap, dayStart, true)
}

func (s Billing) applyCreditEntry(ctx context.Context, cong ConglomerateScope, e models.CreditLedgerEntry, dailyCap *int64, dayStart time.Time, partial bool) (CreditOutcome, error) {
	var out CreditOutcome
	if err := cong.check("apply credit entry"); err != nil {
		return out, err
	}
	e.ConglomerateID = cong.id
	if e.ID == "" {
		e.ID = uuid.NewString()
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = now()
	}
	e.GroupKey = GroupKey(e)
	var short error // partial: what bound a spend taken in part
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		acct, err := s.store().lockCreditAccount(tx, e.ConglomerateID, e.CreatedAt)
		if err != nil {
			return err
		}
		out.Balance, out.SpentToday = acct.Balance, spentOn(acct, dayStart)
		if e.Amount < 0 {
			// Credits other charges hold are not this entry's to spend; the
			// hold with this entry's id is the one it settles.
			held, own, err := holds(tx, e.ConglomerateID, e.CreatedAt, e.ID)
			if err != nil {
				return err
			}
			out.Held = held
			want := -e.Amount
			allowed, why := spendable(want, own, acct.Balance-held, out.SpentToday+held, dailyCap, e.Type.Spends())
			if why != nil {
				// A keyed spend made before (its hold settled, a partial
				// settle's rest unpaid) is answered as made, as it is
				// when the account could pay it all.
				var made int64
				if err := tx.Model(&models.CreditLedgerEntry{}).Where("id = ?", e.ID).Count(&made).Error; err != nil {
					return err
				}
				if made > 0 {
					return models.ErrDuplicate
				}
				if !partial || allowed == 0 {
					return why
				}
				e.Amount, short = -allowed, why
			}
		}
		if err := tx.Create(&e).Error; err != nil {
			return err
		}
		if err := tx.Where("id = ? AND conglomerate_id = ?", e.ID, e.ConglomerateID).Delete(&models.CreditReservation{}).Error; err != nil {
			return err
		}
		newGroup, err := s.store().addToGroup(tx, e)
		if err != nil {
			return err
		}
		out.Balance = acct.Balance + e.Amount
		if e.Type.Spends() {
			out.SpentToday -= e.Amount
		}
		updates := map[string]any{"balance": out.Balance, "updated_at": e.CreatedAt, "spent_day": dayStart, "spent_today": out.SpentToday}
		if newGroup {
			updates["groups"] = acct.Groups + 1
		}
		if err := tx.Model(&models.CreditAccount{}).Where("conglomerate_id = ?", e.ConglomerateID).Updates(updates).Error; err != nil {
			return err
		}
		if e.Amount > 0 {
			out.Woken, err = wakeStalledCampaigns(tx, e.ConglomerateID)
		} else {
			out.Charged = -e.Amount
		}
		return err
	})
	if errors.Is(err, ErrInsufficientCredits) || errors.Is(err, ErrDailyCapReached) {
		return out, err
	}
	if err != nil {
		return CreditOutcome{Balance: out.Balance, SpentToday: out.SpentToday, Held: out.Held}, wrap("apply credit entry", err)
	}
	return out, short
}

// spendable is how much of a spend of want credits the account allows,
// and what bound it (nil: all of it): balanceRoom is the balance less the
// other live reservations (never overdrawn), committed what today's spend
// and those reservations take of dailyCap (nil: none). own is what the
// spend's own live reservation holds: the cap was checked for it when it
// was made, so the cap never takes the spend below it. The cap is named
// when both bind, as a whole spend's refusal always did.
func spendable(want, own, balanceRoom, committed int64, dailyCap *int64, spends bool) (int64, error) {
	allowed, why := want, error(nil)
	if dailyCap != nil && spends && want > own {
		if room := max(*dailyCap-committed, own); room < want {
			allowed, why = room, ErrDailyCapReached
		}
	}
	if balanceRoom < allowed {
		allowed = max(balanceRoom, 0)
		if why == nil {
			why = ErrInsufficientCredits
		}
	}
	return allowed, why
}

// addToGroup adds the entry to its page group and reports whether the
// group is new.
func (s *Store) addToGroup(tx *gorm.DB, e models.CreditLedgerEntry) (bool, error) {
	g := models.CreditLedgerGroup{
		ConglomerateID: e.ConglomerateID, GroupKey: e.GroupKey, Type: e.Type, RunID: e.RunID, CompanyID: e.CompanyID,
		Reference: e.Reference, Amount: e.Amount, Entries: 1, FirstAt: e.CreatedAt, LastAt: e.CreatedAt,
	}
	err := tx.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "conglomerate_id"}, {Name: "group_key"}},
		DoUpdates: clause.Assignments(map[string]any{
			"amount":  gorm.Expr(s.existing("credit_ledger_groups", "amount")+" + ?", e.Amount),
			"entries": gorm.Expr(s.existing("credit_ledger_groups", "entries") + " + 1"),
			"last_at": e.CreatedAt,
		}),
	}).Create(&g).Error
	if err != nil {
		return false, err
	}
	var entries int64
	err = tx.Model(&models.CreditLedgerGroup{}).Select("entries").
		Where("conglomerate_id = ? AND group_key = ?", e.ConglomerateID, e.GroupKey).Scan(&entries).Error
	return entries == 1, err
}

// CreditBalance returns the balance and the credits spent on the UTC day
// starting at dayStart.
func (s Billing) CreditBalance(ctx context.Context, cong ConglomerateScope, dayStart time.Time) (CreditOutcome, error) {
	var acct models.CreditAccount
	if err := cong.check("credit balance"); err != nil {
		return CreditOutcome{}, err
	}
	err := s.db.WithContext(ctx).Where("conglomerate_id = ?", cong.id).Take(&acct).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return CreditOutcome{}, wrap("credit balance", err)
	}
	return CreditOutcome{Balance: acct.Balance, SpentToday: spentOn(acct, dayStart)}, nil
}

// spentOn is the account's spend on the day starting at dayStart: the
// counter only belongs to the day it was last written on.
func spentOn(acct models.CreditAccount, dayStart time.Time) int64 {
	if acct.SpentDay.Equal(dayStart) {
		return acct.SpentToday
	}
	return 0
}

// CreditLedgerPage returns one page of page groups, newest first, and how
// many groups there are: an index range of the groups table and the count
// kept on the account, so the cost does not grow with the ledger (deep
// offsets still skip rows).
func (s Billing) CreditLedgerPage(ctx context.Context, cong ConglomerateScope, offset, limit int) ([]models.CreditLedgerGroup, int64, error) {
	if err := cong.check("credit ledger page"); err != nil {
		return nil, 0, err
	}
	conglomerateID := cong.id
	db := s.db.WithContext(ctx)
	groups := []models.CreditLedgerGroup{}
	err := db.Where("conglomerate_id = ?", conglomerateID).Order("last_at DESC, group_key DESC").
		Offset(offset).Limit(limit).Find(&groups).Error
	if err != nil {
		return nil, 0, wrap("credit ledger page", err)
	}
	var acct models.CreditAccount
	err = db.Where("conglomerate_id = ?", conglomerateID).Take(&acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		err = nil
	}
	return groups, acct.Groups, wrap("credit ledger page", err)
}

// SumCreditEntries adds up the conglomerate's entries (tests compare it
// with the kept balance).
func (s Billing) SumCreditEntries(ctx context.Context, conglomerateID string) (sum, count int64, err error) {
	row := struct{ Sum, Count int64 }{}
	err = s.db.WithContext(ctx).Model(&models.CreditLedgerEntry{}).Select("COALESCE(SUM(amount), 0) AS sum, COUNT(*) AS count").
		Where("conglomerate_id = ?", conglomerateID).Scan(&row).Error
	return row.Sum, row.Count, wrap("sum credit entries", err)
}

// CreditEntryAmount is the amount of one ledger entry of the conglomerate
// (a keyed charge's or grant's id); models.ErrNotFound when there is none.
func (s Billing) CreditEntryAmount(ctx context.Context, cong ConglomerateScope, id string) (int64, error) {
	if err := cong.check("credit entry amount"); err != nil {
		return 0, err
	}
	var e models.CreditLedgerEntry
	err := s.db.WithContext(ctx).Select("amount").Where("id = ? AND conglomerate_id = ?", id, cong.id).Take(&e).Error
	return e.Amount, wrap("credit entry amount", err)
}

// lockCreditAccount makes the conglomerate's credit account row if it is
// missing and reads it under the account's lock (row lock on Postgres;
// SQLite's write transaction is the lock), so every spend, grant and hold
// of one account is serialised.
func (s *Store) lockCreditAccount(tx *gorm.DB, conglomerateID string, at time.Time) (models.CreditAccount, error) {
	var acct models.CreditAccount
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&models.CreditAccount{ConglomerateID: conglomerateID, UpdatedAt: at}).Error; err != nil {
		return acct, err
	}
	q := tx.Model(&models.CreditAccount{}).Where("conglomerate_id = ?", conglomerateID)
	if s.dialect == DialectPostgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	err := q.Take(&acct).Error
	return acct, err
}
