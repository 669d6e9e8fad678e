package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0030KeyedEffects stores what keyed tool calls need to find
// their effect: the ad campaign's last regeneration's call, and an index
// on the files' blob keys (a keyed upload's blob key names its call).
func migration0030KeyedEffects() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0030_keyed_effects",
		Migrate: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.AddColumn(&m0030AdCampaign{}, "RegenerationEffectID"); err != nil {
				return err
			}
			return m.CreateIndex(&m0030CompanyFile{}, "idx_company_files_blob_key")
		},
		Rollback: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.DropIndex(&m0030CompanyFile{}, "idx_company_files_blob_key"); err != nil {
				return err
			}
			return m.DropColumn(&m0030AdCampaign{}, "RegenerationEffectID")
		},
	}
}

type m0030AdCampaign struct {
	CompanyID            string `gorm:"primaryKey;size:36"`
	RegenerationEffectID string `gorm:"size:36;not null;default:''"`
}

func (m0030AdCampaign) TableName() string { return "ad_campaigns" }

type m0030CompanyFile struct {
	ID      string `gorm:"primaryKey;size:36"`
	BlobKey string `gorm:"size:128;not null;index:idx_company_files_blob_key"`
}

func (m0030CompanyFile) TableName() string { return "company_files" }
