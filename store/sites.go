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

// Sites' and repositories' records are written by the worker's hosting and
// repository adapters and read by every sites process. The adapters know
// companies by id only (they act for the system, like SiteOnline), so
// these methods take a company id rather than a scope.

// PublishSite makes the company's site row exist (idempotent): its
// handle is served from then on, from the current deploy.
func (s Sites) PublishSite(ctx context.Context, companyID string) error {
	now := time.Now().UTC()
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&models.CompanySite{CompanyID: companyID, CreatedAt: now, UpdatedAt: now}).Error
	return wrap("publish site", err)
}

// UnpublishSite drops the company's site row (its deploys stay, for a
// later publish).
func (s Sites) UnpublishSite(ctx context.Context, companyID string) error {
	err := s.db.WithContext(ctx).Where("company_id = ?", companyID).Delete(&models.CompanySite{}).Error
	return wrap("unpublish site", err)
}

// siteStateQuery reads a company's site: the company, its site row and
// the current deploy, in one statement.
func (s *Store) siteStateQuery(ctx context.Context) *gorm.DB {
	return s.db.WithContext(ctx).Table("companies AS c").
		Select("c.id AS company_id, c.handle AS handle, c.status <> ? AS online, "+
			"COALESCE(d.id, '') AS deploy_id, COALESCE(d.commit_id, '') AS commit_id, COALESCE(d.manifest_key, '') AS manifest_key", models.CompanyArchived).
		Joins("JOIN company_sites AS s ON s.company_id = c.id").
		Joins("LEFT JOIN site_deploys AS d ON d.id = s.deploy_id")
}

// SiteByHandle is the published site of a handle, or models.ErrNotFound
// (no such company, or its site is not published).
func (s Sites) SiteByHandle(ctx context.Context, handle string) (models.SiteState, error) {
	var st models.SiteState
	err := s.store().siteStateQuery(ctx).Where("c.handle = ?", handle).Take(&st).Error
	return st, wrap("site by handle", err)
}

// SiteOfCompany is the company's published site, or models.ErrNotFound.
func (s Sites) SiteOfCompany(ctx context.Context, companyID string) (models.SiteState, error) {
	var st models.SiteState
	err := s.store().siteStateQuery(ctx).Where("c.id = ?", companyID).Take(&st).Error
	return st, wrap("site of company", err)
}

// SiteDeployOf is the company's deploy of a commit, or models.ErrNotFound.
func (s Sites) SiteDeployOf(ctx context.Context, companyID, commitID string) (models.SiteDeploy, error) {
	var d models.SiteDeploy
	err := s.db.WithContext(ctx).Where("company_id = ? AND commit_id = ?", companyID, commitID).Take(&d).Error
	return d, wrap("site deploy", err)
}

// RecordSiteDeploy records an exported deploy; a deploy of the same
// commit recorded before (two workers exported it at once) is returned
// instead, so each commit has one deploy.
func (s Sites) RecordSiteDeploy(ctx context.Context, d models.SiteDeploy) (models.SiteDeploy, error) {
	if d.ID == "" {
		d.ID = uuid.NewString()
	}
	d.CreatedAt = time.Now().UTC()
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&d)
	if res.Error != nil {
		return models.SiteDeploy{}, wrap("record site deploy", res.Error)
	}
	if res.RowsAffected == 1 {
		return d, nil
	}
	return s.SiteDeployOf(ctx, d.CompanyID, d.CommitID)
}

// SwitchSiteDeploy makes deployID the company's current deploy in one
// statement (publishing the site when it was not). Every sites process
// serves it once its cached site row expires.
func (s Sites) SwitchSiteDeploy(ctx context.Context, companyID, deployID string) error {
	now := time.Now().UTC()
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "company_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"deploy_id", "updated_at"}),
	}).Create(&models.CompanySite{CompanyID: companyID, DeployID: &deployID, CreatedAt: now, UpdatedAt: now}).Error
	return wrap("switch site deploy", err)
}

// SetSiteEnv replaces the sealed environment of a published site;
// models.ErrNotFound when the site is not published.
func (s Sites) SetSiteEnv(ctx context.Context, companyID string, sealed []byte) error {
	res := s.db.WithContext(ctx).Model(&models.CompanySite{}).Where("company_id = ?", companyID).
		Updates(map[string]any{"env_sealed": sealed, "updated_at": time.Now().UTC()})
	if res.Error != nil {
		return wrap("set site env", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("set site env", models.ErrNotFound)
	}
	return nil
}

// SiteEnv is the sealed environment of a published site (nil when never
// configured); models.ErrNotFound when the site is not published.
func (s Sites) SiteEnv(ctx context.Context, companyID string) ([]byte, error) {
	var site models.CompanySite
	err := s.db.WithContext(ctx).Select("env_sealed").Where("company_id = ?", companyID).Take(&site).Error
	return site.EnvSealed, wrap("site env", err)
}

// CompanyRepositoryOf is the recorded home and first commit of the
// company's repository, or models.ErrNotFound before it was first made.
func (s Sites) CompanyRepositoryOf(ctx context.Context, companyID string) (models.CompanyRepository, error) {
	var r models.CompanyRepository
	err := s.db.WithContext(ctx).Where("company_id = ?", companyID).Take(&r).Error
	return r, wrap("company repository", err)
}

// RecordCompanyRepository records (or replaces) the home and first commit
// of the company's repository.
func (s Sites) RecordCompanyRepository(ctx context.Context, r models.CompanyRepository) error {
	now := time.Now().UTC()
	r.CreatedAt, r.UpdatedAt = now, now
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "company_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"home", "first_commit", "updated_at"}),
	}).Create(&r).Error
	return wrap("record company repository", err)
}

// RecordRepositoryRecreated replaces the repository's record after heal
// made a new one and says so in the company's activity feed, in one
// transaction.
func (s Sites) RecordRepositoryRecreated(ctx context.Context, c CompanyScope, r models.CompanyRepository, a models.ActivityInput) error {
	if err := c.check("record repository recreated"); err != nil {
		return err
	}
	if r.CompanyID != c.id {
		return errors.New("store: record repository recreated: another company's repository")
	}
	return s.store().InTx(ctx, func(tx *Store) error {
		if err := tx.Sites().RecordCompanyRepository(ctx, r); err != nil {
			return err
		}
		return tx.Companies().RecordActivity(ctx, c, a)
	})
}
