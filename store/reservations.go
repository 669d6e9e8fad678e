package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"holdco/models"
)

// ErrAlreadyCharged is ReserveCredits' answer when the ledger already
// holds the entry the reservation would settle into: the charge was made.
var ErrAlreadyCharged = errors.New("store: already charged")

// heldCredits sums the conglomerate's reservations live at now, except
// the one with id except.
func heldCredits(tx *gorm.DB, conglomerateID string, now time.Time, except string) (int64, error) {
	var held int64
	err := tx.Model(&models.CreditReservation{}).Select("COALESCE(SUM(amount), 0)").
		Where("conglomerate_id = ? AND expires_at > ? AND id <> ?", conglomerateID, now, except).Scan(&held).Error
	return held, err
}

// holds is what the conglomerate's live reservations hold at now: others
// those but id's, own id's (0 when it has none, or it lapsed).
func holds(tx *gorm.DB, conglomerateID string, now time.Time, id string) (others, own int64, err error) {
	var row struct{ Others, Own int64 }
	err = tx.Model(&models.CreditReservation{}).
		Select("COALESCE(SUM(CASE WHEN id <> ? THEN amount ELSE 0 END), 0) AS others, COALESCE(SUM(CASE WHEN id = ? THEN amount ELSE 0 END), 0) AS own", id, id).
		Where("conglomerate_id = ? AND expires_at > ?", conglomerateID, now).Scan(&row).Error
	return row.Others, row.Own, err
}

// ReserveCredits holds r.Amount credits of the scope's conglomerate under
// r.ID (the id of the ledger entry that will settle it), in the same
// transaction and lock as ApplyCreditEntry: the balance minus the other
// live reservations must cover it, and today's spend plus the
// reservations must stay within dailyCap. With atLeast > 0, when less
// than r.Amount is free (but at least atLeast), what is free is held
// instead. A live reservation with the same id is answered as it is (a
// retry holds nothing more); an expired one is replaced. ErrAlreadyCharged:
// the ledger has the entry already. Refusals are ErrInsufficientCredits
// and ErrDailyCapReached with the numbers in the outcome.
func (s Billing) ReserveCredits(ctx context.Context, cong ConglomerateScope, r models.CreditReservation, atLeast int64, dailyCap *int64, dayStart time.Time) (models.CreditReservation, CreditOutcome, error) {
	var out CreditOutcome
	if err := cong.check("reserve credits"); err != nil {
		return r, out, err
	}
	r.ConglomerateID = cong.id
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now()
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		acct, err := s.store().lockCreditAccount(tx, r.ConglomerateID, r.CreatedAt)
		if err != nil {
			return err
		}
		out.Balance, out.SpentToday = acct.Balance, spentOn(acct, dayStart)
		var n int64
		if err := tx.Model(&models.CreditLedgerEntry{}).Where("id = ?", r.ID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return ErrAlreadyCharged
		}
		var existing []models.CreditReservation
		if err := tx.Where("id = ? AND conglomerate_id = ?", r.ID, r.ConglomerateID).Limit(1).Find(&existing).Error; err != nil {
			return err
		}
		if len(existing) == 1 {
			if existing[0].ExpiresAt.After(r.CreatedAt) {
				r = existing[0]
				return nil
			}
			if err := tx.Delete(&existing[0]).Error; err != nil {
				return err
			}
		}
		held, err := heldCredits(tx, r.ConglomerateID, r.CreatedAt, r.ID)
		if err != nil {
			return err
		}
		out.Held = held
		fit := func(room int64, refusal error) error {
			if room >= r.Amount {
				return nil
			}
			if atLeast > 0 && room >= atLeast {
				r.Amount = room
				return nil
			}
			return refusal
		}
		if dailyCap != nil {
			if err := fit(*dailyCap-out.SpentToday-held, ErrDailyCapReached); err != nil {
				return err
			}
		}
		if err := fit(acct.Balance-held, ErrInsufficientCredits); err != nil {
			return err
		}
		return tx.Create(&r).Error
	})
	switch {
	case errors.Is(err, ErrInsufficientCredits), errors.Is(err, ErrDailyCapReached), errors.Is(err, ErrAlreadyCharged):
		return r, out, err
	}
	return r, out, wrap("reserve credits", err)
}

// ReleaseCredits removes the scope's conglomerate's reservation id (none
// is not an error): its credits are free again.
func (s Billing) ReleaseCredits(ctx context.Context, cong ConglomerateScope, id string) error {
	if err := cong.check("release credits"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Where("id = ? AND conglomerate_id = ?", id, cong.id).Delete(&models.CreditReservation{}).Error
	return wrap("release credits", err)
}

// HeldCredits is what the scope's conglomerate's live reservations hold.
func (s Billing) HeldCredits(ctx context.Context, cong ConglomerateScope, at time.Time) (int64, error) {
	if err := cong.check("held credits"); err != nil {
		return 0, err
	}
	held, err := heldCredits(s.db.WithContext(ctx), cong.id, at, "")
	return held, wrap("held credits", err)
}

// ReleaseRunCredits removes every reservation of the run (a turn that
// ended: a call it left holding, e.g. after its worker died, holds
// nothing more).
func (s Billing) ReleaseRunCredits(ctx context.Context, cong ConglomerateScope, runID string) error {
	if err := cong.check("release run credits"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Where("conglomerate_id = ? AND run_id = ?", cong.id, runID).Delete(&models.CreditReservation{}).Error
	return wrap("release run credits", err)
}
