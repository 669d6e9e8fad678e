package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm/clause"

	"holdco/models"
)

// ErrCreateKeyUsed: the Idempotency-Key was stored by another request in
// the meantime; read it again with CompanyCreateKey.
var ErrCreateKeyUsed = errors.New("store: idempotency key already used")

// CreateCompanyToProvision creates a company together with its
// provisioning intent (and, with key, the Idempotency-Key that names it),
// in one transaction: a crash either keeps all of them or none. key's
// CreatedAt and ExpiresAt are the caller's. Errors are
// those of CreateCompany, plus ErrCreateKeyUsed when key was taken by a
// concurrent request (nothing is created then). The new company's scope
// comes with it.
func (s Companies) CreateCompanyToProvision(ctx context.Context, cong ConglomerateScope, company models.Company, seedRepo bool, key *models.CompanyCreateKey) (models.Company, CompanyScope, error) {
	var created models.Company
	err := s.store().InTx(ctx, func(tx *Store) error {
		var err error
		if created, err = tx.Companies().CreateCompany(ctx, cong, company); err != nil {
			return err
		}
		at := now()
		if err := tx.db.Create(&models.CompanyProvisioning{CompanyID: created.ID, SeedRepo: seedRepo, RequestedAt: at}).Error; err != nil {
			return wrap("create company: provisioning intent", err)
		}
		if err := tx.recordActivityAt(ctx, created.ID, models.ActivityInput{Kind: models.ActivityCompanyCreated, Actor: models.ActorUser,
			Summary: "Company " + created.Name + " created", Subject: created.ID}, at); err != nil {
			return err
		}
		if key == nil {
			return nil
		}
		k := *key
		k.CompanyID = created.ID
		// An expired key may be used again (expiry is judged at the key's
		// CreatedAt, the caller's clock).
		if err := tx.db.Where("key_hash = ? AND expires_at <= ?", k.KeyHash, k.CreatedAt).Delete(&models.CompanyCreateKey{}).Error; err != nil {
			return wrap("create company: expire idempotency key", err)
		}
		if err := tx.db.Create(&k).Error; err != nil {
			if isUniqueViolation(err) {
				return ErrCreateKeyUsed
			}
			return wrap("create company: idempotency key", err)
		}
		return nil
	})
	if err != nil {
		return models.Company{}, CompanyScope{}, err
	}
	return created, CompanyScope{id: created.ID, conglomerateID: created.ConglomerateID}, nil
}

// CompanyCreateKey returns the live (unexpired at at) Idempotency-Key
// record with this hash, or models.ErrNotFound.
func (s Companies) CompanyCreateKey(ctx context.Context, keyHash string, at time.Time) (models.CompanyCreateKey, error) {
	var k models.CompanyCreateKey
	err := s.db.WithContext(ctx).Where("key_hash = ? AND expires_at > ?", keyHash, at).Take(&k).Error
	return k, wrap("get idempotency key", err)
}

// DeleteExpiredCompanyCreateKeys forgets Idempotency-Keys expired at at.
func (s Companies) DeleteExpiredCompanyCreateKeys(ctx context.Context, at time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at <= ?", at).Delete(&models.CompanyCreateKey{})
	return res.RowsAffected, wrap("delete expired idempotency keys", res.Error)
}

// MarkProvisioningStarted records that the company's provisioning
// workflow exists; the sweeper leaves it alone from then on.
func (s Companies) MarkProvisioningStarted(ctx context.Context, c CompanyScope, at time.Time) error {
	if err := c.check("mark provisioning started"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Model(&models.CompanyProvisioning{}).
		Where("company_id = ? AND started_at IS NULL", c.id).Update("started_at", at).Error
	return wrap("mark provisioning started", err)
}

// PendingCompany is a company whose provisioning waits, with the worker's
// scope of it.
type PendingCompany struct {
	models.PendingProvisioning
	Scope CompanyScope
}

// PendingProvisioning returns up to limit companies that are not archived
// and whose provisioning was asked for before requestedBefore but not
// started, oldest first, across tenants: for the worker's sweeper only.
func (s Companies) PendingProvisioning(ctx context.Context, requestedBefore time.Time, limit int) ([]PendingCompany, error) {
	var rows []models.CompanyProvisioning
	err := s.db.WithContext(ctx).Table("company_provisioning p").Select("p.*").
		Joins("JOIN companies c ON c.id = p.company_id").
		Where("p.started_at IS NULL AND p.requested_at < ? AND c.status <> ?", requestedBefore, models.CompanyArchived).
		Order("p.requested_at, p.company_id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, wrap("pending provisioning", err)
	}
	out := make([]PendingCompany, 0, len(rows))
	for _, r := range rows {
		c, err := s.store().getCompany(ctx, r.CompanyID)
		if err != nil {
			return nil, err
		}
		out = append(out, PendingCompany{
			PendingProvisioning: models.PendingProvisioning{Company: c, SeedRepo: r.SeedRepo},
			Scope:               CompanyScope{id: c.ID, conglomerateID: c.ConglomerateID},
		})
	}
	return out, nil
}

// ProvisioningSeedRepo reports whether the company's repository may be
// seeded: what its creation recorded, false once it was resumed as an
// import. A company without an intent row (made by other paths) is seeded.
func (s Companies) ProvisioningSeedRepo(ctx context.Context, c CompanyScope) (bool, error) {
	var p models.CompanyProvisioning
	if err := c.check("provisioning seed"); err != nil {
		return false, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ?", c.id).Take(&p).Error
	if err != nil {
		if errors.Is(translate(err), models.ErrNotFound) {
			return true, nil
		}
		return false, wrap("provisioning seed", err)
	}
	return p.SeedRepo, nil
}

// RecordImportResume records that the company's repository holds imported
// code: it is never seeded from now on.
func (s Companies) RecordImportResume(ctx context.Context, c CompanyScope, at time.Time) error {
	if err := c.check("record import resume"); err != nil {
		return err
	}
	companyID := c.id
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "company_id"}},
		DoUpdates: clause.Assignments(map[string]any{"seed_repo": false}),
	}).Create(&models.CompanyProvisioning{CompanyID: companyID, SeedRepo: false, RequestedAt: at, StartedAt: &at}).Error
	if err != nil {
		return fmt.Errorf("store: record import resume: %w", translate(err))
	}
	return nil
}
