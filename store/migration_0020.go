package store

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0020Analytics adds the companies' public analytics keys (made
// for every existing company here, for new ones with the company), the raw
// events indexed by (company, day, visitor) and the rollups the summaries
// read: per visitor and day, per day, per hour, per page and per referrer,
// each visitor's last day, and the visitors of closed periods.
func migration0020Analytics() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0020_analytics",
		Migrate: func(tx *gorm.DB) error {
			if err := tx.Migrator().CreateTable(&m0020AnalyticsKey{}, &m0020Event{}, &m0020VisitorDay{}, &m0020Daily{},
				&m0020Hourly{}, &m0020DailyPage{}, &m0020DailyReferrer{}, &m0020Visitor{}, &m0020PeriodVisitors{}); err != nil {
				return err
			}
			var ids []string
			if err := tx.Table("companies").Where("id NOT IN (?)", tx.Table("analytics_keys").Select("company_id")).
				Order("id").Pluck("id", &ids).Error; err != nil {
				return err
			}
			at := time.Now().UTC().Truncate(time.Microsecond)
			for _, id := range ids {
				if err := tx.Create(&m0020AnalyticsKey{CompanyID: id, Key: m0020NewKey(), CreatedAt: at}).Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("analytics_period_visitors", "analytics_visitors", "analytics_daily_referrers", "analytics_daily_pages",
				"analytics_hourly", "analytics_daily", "analytics_visitor_days", "analytics_events", "analytics_keys")
		},
	}
}

// m0020NewKey is the key format of the time of this migration: "hca_" and
// 24 base32 characters (120 random bits).
func m0020NewKey() string {
	b := make([]byte, 15)
	_, _ = rand.Read(b)
	return "hca_" + strings.ToLower(base32.StdEncoding.EncodeToString(b))
}

type m0020Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0020Company) TableName() string { return "companies" }

type m0020AnalyticsKey struct {
	CompanyID string        `gorm:"primaryKey;size:36"`
	Company   *m0020Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Key       string        `gorm:"size:64;not null;uniqueIndex:idx_analytics_keys_key"`
	CreatedAt time.Time
}

func (m0020AnalyticsKey) TableName() string { return "analytics_keys" }

type m0020Event struct {
	ID           int64     `gorm:"primaryKey;autoIncrement"`
	CompanyID    string    `gorm:"size:36;not null;index:idx_analytics_events_company_day,priority:1"`
	Day          string    `gorm:"size:10;not null;index:idx_analytics_events_company_day,priority:2"`
	DistinctID   string    `gorm:"size:200;not null;index:idx_analytics_events_company_day,priority:3"`
	At           time.Time `gorm:"not null"`
	Event        string    `gorm:"size:200;not null"`
	Path         string    `gorm:"size:500;not null"`
	Referrer     string    `gorm:"size:253;not null"`
	UTMSource    string    `gorm:"size:200;not null"`
	UTMMedium    string    `gorm:"size:200;not null"`
	UTMCampaign  string    `gorm:"size:200;not null"`
	Country      string    `gorm:"size:2;not null"`
	ScreenWidth  int       `gorm:"not null"`
	ScreenHeight int       `gorm:"not null"`
}

func (m0020Event) TableName() string { return "analytics_events" }

type m0020VisitorDay struct {
	CompanyID    string    `gorm:"primaryKey;size:36"`
	Day          string    `gorm:"primaryKey;size:10"`
	DistinctID   string    `gorm:"primaryKey;size:200"`
	Country      string    `gorm:"size:2;not null"`
	FirstAt      time.Time `gorm:"not null"`
	LastAt       time.Time `gorm:"not null"`
	Events       int64     `gorm:"not null"`
	Pageviews    int64     `gorm:"not null"`
	Sessions     int64     `gorm:"not null"`
	Bounces      int64     `gorm:"not null"`
	DurationMS   int64     `gorm:"not null"`
	CurPageviews int64     `gorm:"not null"`
	Hours        int64     `gorm:"not null"`
}

func (m0020VisitorDay) TableName() string { return "analytics_visitor_days" }

type m0020Daily struct {
	CompanyID  string `gorm:"primaryKey;size:36"`
	Day        string `gorm:"primaryKey;size:10"`
	Visitors   int64  `gorm:"not null"`
	Pageviews  int64  `gorm:"not null"`
	Events     int64  `gorm:"not null"`
	Sessions   int64  `gorm:"not null"`
	Bounces    int64  `gorm:"not null"`
	DurationMS int64  `gorm:"not null"`
}

func (m0020Daily) TableName() string { return "analytics_daily" }

type m0020Hourly struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	Hour      string `gorm:"primaryKey;size:13"`
	Visitors  int64  `gorm:"not null"`
	Pageviews int64  `gorm:"not null"`
}

func (m0020Hourly) TableName() string { return "analytics_hourly" }

type m0020DailyPage struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	Day       string `gorm:"primaryKey;size:10"`
	Path      string `gorm:"primaryKey;size:500"`
	Pageviews int64  `gorm:"not null"`
}

func (m0020DailyPage) TableName() string { return "analytics_daily_pages" }

type m0020DailyReferrer struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	Day       string `gorm:"primaryKey;size:10"`
	Referrer  string `gorm:"primaryKey;size:253"`
	Pageviews int64  `gorm:"not null"`
}

func (m0020DailyReferrer) TableName() string { return "analytics_daily_referrers" }

type m0020Visitor struct {
	CompanyID  string `gorm:"primaryKey;size:36;index:idx_analytics_visitors_last,priority:1"`
	DistinctID string `gorm:"primaryKey;size:200"`
	LastDay    string `gorm:"size:10;not null;index:idx_analytics_visitors_last,priority:2"`
}

func (m0020Visitor) TableName() string { return "analytics_visitors" }

type m0020PeriodVisitors struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	FromDay   string `gorm:"primaryKey;size:10"`
	ToDay     string `gorm:"primaryKey;size:10"`
	Visitors  int64  `gorm:"not null"`
}

func (m0020PeriodVisitors) TableName() string { return "analytics_period_visitors" }
