package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"holdco/models"
)

// MailboxOfDeletedUser reports whether a deleted account used the
// normalized mailbox; such a mailbox may not sign up again.
func (s Identity) MailboxOfDeletedUser(ctx context.Context, normalizedEmail string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Unscoped().Model(&models.User{}).
		Where("normalized_email = ? AND deleted_at IS NOT NULL", normalizedEmail).Count(&n).Error
	return n > 0, wrap("find deleted mailbox", err)
}

// DeleteAccount removes a user's account in one transaction: the companies
// of the conglomerates they own are archived and detached, those
// conglomerates (with their memberships) are deleted, the user's other
// memberships go, every API key and web session is revoked, the user's
// OAuth consents, codes, tokens and sessions are deleted, and the user is
// soft-deleted (the row keeps the mailbox that may not sign up again).
func (s Identity) DeleteAccount(ctx context.Context, userID string, at time.Time) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var user models.User
		if err := tx.Where("id = ?", userID).Take(&user).Error; err != nil {
			return err
		}
		owned := tx.Model(&models.Conglomerate{}).Select("id").Where("owner_user_id = ?", userID)
		if err := tx.Model(&models.Company{}).Where("conglomerate_id IN (?) AND archived_at IS NULL", owned).
			Updates(map[string]any{"status": models.CompanyArchived, "archived_at": at, "updated_at": at}).Error; err != nil {
			return err
		}
		// Archived companies outlive their conglomerate (their handles stay
		// taken and their records stay for accounting).
		if err := tx.Model(&models.Company{}).Where("conglomerate_id IN (?)", owned).
			Update("conglomerate_id", nil).Error; err != nil {
			return err
		}
		if err := tx.Where("conglomerate_id IN (?) OR user_id = ?", owned, userID).Delete(&models.Membership{}).Error; err != nil {
			return err
		}
		if err := tx.Where("owner_user_id = ?", userID).Delete(&models.Conglomerate{}).Error; err != nil {
			return err
		}
		if err := tx.Model(&models.APIKey{}).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", at).Error; err != nil {
			return err
		}
		if err := tx.Model(&models.WebSession{}).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", at).Error; err != nil {
			return err
		}
		// What the user granted assistants goes entirely: consents
		// (connected assistants), authorization codes, access tokens and
		// the authorization server's sign-in sessions.
		for _, row := range []any{&models.OAuthConsent{}, &models.OAuthCode{}, &models.OAuthToken{}, &models.OAuthSession{}} {
			if err := tx.Where("user_id = ?", userID).Delete(row).Error; err != nil {
				return err
			}
		}
		return tx.Model(&user).Update("deleted_at", at).Error
	})
	return wrap("delete account", err)
}

// UpdateConglomerateSettings writes the editable settings.
func (s Identity) UpdateConglomerateSettings(ctx context.Context, cong ConglomerateScope, name string, dailyCreditCap *int64) error {
	if err := cong.check("update conglomerate"); err != nil {
		return err
	}
	return s.store().updateConglomerate(ctx, "update conglomerate", "id = ?", cong.id, map[string]any{"name": name, "daily_credit_cap": dailyCreditCap})
}
