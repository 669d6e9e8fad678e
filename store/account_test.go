package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

func TestDeleteAccount(t *testing.T) {
	ctx := context.Background()
	s := testenv.NewStore(t)
	ada, adaCong := signUp(t, s, "ada")
	bob, bobCong := signUp(t, s, "bob")
	adaCo, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(adaCong.ID), models.Company{Name: "Ada Co", Handle: handle("ada")})
	require.NoError(t, err)
	bobCo, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(bobCong.ID), models.Company{Name: "Bob Co", Handle: handle("bob")})
	require.NoError(t, err)
	key := models.APIKey{UserID: ada.ID, ConglomerateID: adaCong.ID, Kind: models.APIKeyPersonal, Name: "ci", TokenHash: "h-" + ada.ID}
	require.NoError(t, s.Identity().CreateAPIKey(ctx, &key))
	sess := models.WebSession{UserID: ada.ID, ExpiresAt: time.Now().Add(time.Hour)}
	require.NoError(t, s.Identity().CreateWebSession(ctx, &sess))

	at := time.Now().UTC().Truncate(time.Second)
	require.NoError(t, s.Identity().DeleteAccount(ctx, ada.ID, at))

	_, err = s.Identity().GetUser(ctx, ada.ID)
	assert.ErrorIs(t, err, models.ErrNotFound, "the user is soft-deleted")
	deleted, err := s.Identity().MailboxOfDeletedUser(ctx, "ada@example.com")
	require.NoError(t, err)
	assert.True(t, deleted)
	_, err = s.Identity().GetConglomerate(ctx, adaCong.ID)
	assert.ErrorIs(t, err, models.ErrNotFound, "the conglomerate is hard-deleted")

	co, err := s.Companies().GetCompany(ctx, systemScope(t, s, adaCo.ID))
	require.NoError(t, err, "the archived company outlives its conglomerate")
	assert.Equal(t, models.CompanyArchived, co.Status)
	assert.Empty(t, co.ConglomerateID)
	require.NotNil(t, co.ArchivedAt)

	k, err := s.Identity().GetAPIKey(ctx, key.ID)
	require.NoError(t, err)
	assert.NotNil(t, k.RevokedAt)
	ws, err := s.Identity().GetWebSession(ctx, sess.ID)
	require.NoError(t, err)
	assert.NotNil(t, ws.RevokedAt)

	// The other tenant is untouched.
	_, err = s.Identity().GetUser(ctx, bob.ID)
	require.NoError(t, err)
	other, err := s.Companies().GetCompany(ctx, systemScope(t, s, bobCo.ID))
	require.NoError(t, err)
	assert.Equal(t, models.CompanyActive, other.Status)
	assert.Equal(t, bobCong.ID, other.ConglomerateID)

	assert.ErrorIs(t, s.Identity().DeleteAccount(ctx, ada.ID, at), models.ErrNotFound, "a deleted account cannot be deleted again")
}

func TestCredentialRows(t *testing.T) {
	ctx := context.Background()
	s := testenv.NewStore(t)
	ada, cong := signUp(t, s, "ada")
	now := time.Now().UTC()

	code := models.CLIAuthCode{CodeHash: "code-" + ada.ID, UserID: ada.ID, CodeChallenge: "c", ExpiresAt: now.Add(time.Minute)}
	require.NoError(t, s.Identity().CreateCLIAuthCode(ctx, &code))
	got, err := s.Identity().ConsumeCLIAuthCode(ctx, code.CodeHash, now)
	require.NoError(t, err)
	assert.Equal(t, ada.ID, got.UserID)
	_, err = s.Identity().ConsumeCLIAuthCode(ctx, code.CodeHash, now)
	assert.ErrorIs(t, err, models.ErrNotFound, "a code is consumed once")

	d := models.DeviceAuthorization{DeviceCodeHash: "dev-" + ada.ID, UserCode: "BCDF-" + ada.ID[:4], Status: models.DevicePending, IntervalSeconds: 5, ExpiresAt: now.Add(time.Minute)}
	require.NoError(t, s.Identity().CreateDeviceAuthorization(ctx, &d))
	won, err := s.Identity().TransitionDevice(ctx, d.ID, models.DevicePending, models.DeviceApproved, &ada.ID)
	require.NoError(t, err)
	assert.True(t, won)
	won, err = s.Identity().TransitionDevice(ctx, d.ID, models.DevicePending, models.DeviceDenied, &ada.ID)
	require.NoError(t, err)
	assert.False(t, won, "only one decision wins")

	a, err := s.Identity().InstanceSecret(ctx, "k-"+ada.ID, func() []byte { return []byte("first") })
	require.NoError(t, err)
	b, err := s.Identity().InstanceSecret(ctx, "k-"+ada.ID, func() []byte { return []byte("second") })
	require.NoError(t, err)
	assert.Equal(t, a, b, "the first secret stays")

	cap := int64(50)
	require.NoError(t, s.Identity().UpdateConglomerateSettings(ctx, s.SystemConglomerateScope(cong.ID), "Renamed", &cap))
	c, err := s.Identity().GetConglomerate(ctx, cong.ID)
	require.NoError(t, err)
	assert.Equal(t, "Renamed", c.Name)
	assert.Equal(t, int64(50), *c.DailyCreditCap)
	require.NoError(t, s.Identity().UpdateConglomerateSettings(ctx, s.SystemConglomerateScope(cong.ID), "Renamed", nil))
	c, _ = s.Identity().GetConglomerate(ctx, cong.ID)
	assert.Nil(t, c.DailyCreditCap)
}

// TestDeleteAccountDeletesOAuthRows: an account's deletion takes what the
// user granted assistants with it (consents, codes, tokens, authorization
// server sessions); another user's rows stay.
func TestDeleteAccountDeletesOAuthRows(t *testing.T) {
	ctx := context.Background()
	s := testenv.NewStore(t)
	db := store.GormDB(s)
	ada, _ := signUp(t, s, "ada")
	bob, _ := signUp(t, s, "bob")
	now := time.Now().UTC()
	for _, u := range []models.User{ada, bob} {
		require.NoError(t, s.OAuth().SaveOAuthConsent(ctx, models.OAuthConsent{UserID: u.ID, ClientID: "hco_dcr_x", ClientName: "X", RedirectURI: "https://x.example/cb",
			RedirectSet: "set", Version: 1, CreatedAt: now, ApprovedAt: now}))
		require.NoError(t, s.OAuth().CreateOAuthCode(ctx, &models.OAuthCode{CodeHash: "code-" + u.ID, ClientID: "hco_dcr_x", UserID: u.ID, RedirectURI: "https://x.example/cb",
			CodeChallenge: "c", Resource: "r", Scope: "nanocorp", CreatedAt: now, ExpiresAt: now.Add(time.Minute)}))
		require.NoError(t, db.Create(&models.OAuthToken{TokenHash: "tok-" + u.ID, UserID: u.ID, ClientID: "hco_dcr_x", Resource: "r", Scope: "nanocorp", CreatedAt: now}).Error)
		require.NoError(t, s.OAuth().CreateOAuthSession(ctx, &models.OAuthSession{TokenHash: "sess-" + u.ID, UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
	}
	require.NoError(t, s.Identity().DeleteAccount(ctx, ada.ID, now))

	for _, table := range []string{"oauth_consents", "oauth_codes", "oauth_tokens", "oauth_sessions"} {
		var n int64
		require.NoError(t, db.Table(table).Where("user_id = ?", ada.ID).Count(&n).Error)
		assert.Zero(t, n, "%s of the deleted user", table)
		require.NoError(t, db.Table(table).Where("user_id = ?", bob.ID).Count(&n).Error)
		assert.EqualValues(t, 1, n, "%s of another user", table)
	}
}
