package identity

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// Device flow (RFC 8628) settings.
const (
	deviceCodeTTL      = 10 * time.Minute
	devicePollInterval = 5 * time.Second
	// userCodeAlphabet avoids vowels (no words) and look-alikes (0/O, 1/I).
	userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
	DevicePagePath   = "/auth/cli/device"
)

// DeviceStart is the answer to POST /auth/cli/device/start.
type DeviceStart struct {
	DeviceCode              string
	UserCode                string
	VerificationURI         string
	VerificationURIComplete string
	Interval                int
	ExpiresIn               int
}

// Limits of POST /auth/cli/device/start per client address.
const (
	DeviceStartsPerMinute = 10
	DeviceStartsPerHour   = 60
)

// StartDevice opens a device-flow grant.
//
// from is the client's address: each address may start DeviceStartsPerMinute
// logins a minute and DeviceStartsPerHour an hour, counted in the database
// (every replica counts the same); more answer rate_limited.
func (s *Service) StartDevice(ctx context.Context, from string) (DeviceStart, error) {
	if err := service.CountAttempt(ctx, s.store, s.now(), "Too many device logins were started from this address", "device_start:"+from,
		store.AttemptWindow{Name: "device_start/1m", Every: time.Minute, Limit: DeviceStartsPerMinute},
		store.AttemptWindow{Name: "device_start/1h", Every: time.Hour, Limit: DeviceStartsPerHour}); err != nil {
		return DeviceStart{}, err
	}
	device := service.NewSecret(32)
	userCode := newUserCode()
	d := models.DeviceAuthorization{
		DeviceCodeHash:  service.HashSecret(device),
		UserCode:        userCode,
		Status:          models.DevicePending,
		IntervalSeconds: int(devicePollInterval.Seconds()),
		ExpiresAt:       s.now().Add(deviceCodeTTL),
	}
	if err := s.store.Identity().CreateDeviceAuthorization(ctx, &d); err != nil {
		return DeviceStart{}, err
	}
	page := s.cfg.PublicURL + DevicePagePath
	return DeviceStart{
		DeviceCode: device, UserCode: userCode,
		VerificationURI: page, VerificationURIComplete: page + "?user_code=" + userCode,
		Interval: d.IntervalSeconds, ExpiresIn: int(deviceCodeTTL.Seconds()),
	}, nil
}

// newUserCode returns XXXX-XXXX from userCodeAlphabet (about 34 bits).
func newUserCode() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	var sb strings.Builder
	for i, c := range b {
		if i == 4 {
			sb.WriteByte('-')
		}
		sb.WriteByte(userCodeAlphabet[int(c)%len(userCodeAlphabet)])
	}
	return sb.String()
}

// NormalizeUserCode accepts what a person types: any case, with or without
// the dash or spaces.
func NormalizeUserCode(code string) string {
	var sb strings.Builder
	for _, r := range strings.ToUpper(code) {
		if strings.ContainsRune(userCodeAlphabet, r) {
			sb.WriteRune(r)
		}
	}
	c := sb.String()
	if len(c) != 8 {
		return c
	}
	return c[:4] + "-" + c[4:]
}

// Device poll outcomes (RFC 8628 §3.5).
const (
	DeviceAuthorizationPending = "authorization_pending"
	DeviceSlowDown             = "slow_down"
	DeviceExpiredToken         = "expired_token"
	DeviceAccessDenied         = "access_denied"
	DeviceComplete             = "complete"
)

// DevicePoll is the answer to POST /auth/cli/device/token.
type DevicePoll struct {
	Status   string
	Interval int
	Grant    *SessionGrant // when Status is complete
}

// PollDevice reports the grant's state. Polling faster than the interval
// answers slow_down and lengthens the interval by 5 seconds. After
// approval the first poll gets the session key, after a denial the first
// poll gets access_denied; either way the device code is then spent and
// later polls are refused (400) like an unknown code.
func (s *Service) PollDevice(ctx context.Context, deviceCode string) (DevicePoll, error) {
	now := s.now()
	d, err := s.store.Identity().GetDeviceAuthorizationByDeviceCode(ctx, service.HashSecret(deviceCode))
	if errors.Is(err, models.ErrNotFound) {
		return DevicePoll{}, models.Errorf(models.CodeBadRequest, "The device code is unknown; run `holdco login --device` again.")
	}
	if err != nil {
		return DevicePoll{}, err
	}
	if d.Status == models.DeviceConsumed {
		return DevicePoll{}, models.Errorf(models.CodeBadRequest, "The device code was already used; run `holdco login --device` again.")
	}
	if !now.Before(d.ExpiresAt) {
		return DevicePoll{Status: DeviceExpiredToken, Interval: d.IntervalSeconds}, nil
	}
	tooSoon := d.LastPolledAt != nil && now.Sub(*d.LastPolledAt) < time.Duration(d.IntervalSeconds)*time.Second
	interval := d.IntervalSeconds
	if tooSoon {
		interval += 5
	}
	if err := s.store.Identity().RecordDevicePoll(ctx, d.ID, now, interval); err != nil {
		return DevicePoll{}, err
	}
	if tooSoon {
		return DevicePoll{Status: DeviceSlowDown, Interval: interval}, nil
	}
	switch d.Status {
	case models.DeviceDenied:
		// The denial is told once; the code is then spent like an
		// approved one (RFC 8628: the client stops polling).
		won, err := s.store.Identity().TransitionDevice(ctx, d.ID, models.DeviceDenied, models.DeviceConsumed, nil)
		if err != nil {
			return DevicePoll{}, err
		}
		if !won {
			return DevicePoll{}, models.Errorf(models.CodeBadRequest, "The device code was already used; run `holdco login --device` again.")
		}
		return DevicePoll{Status: DeviceAccessDenied, Interval: interval}, nil
	case models.DevicePending:
		return DevicePoll{Status: DeviceAuthorizationPending, Interval: interval}, nil
	}
	// Approved: exactly one poll wins the transition to consumed.
	won, err := s.store.Identity().TransitionDevice(ctx, d.ID, models.DeviceApproved, models.DeviceConsumed, nil)
	if err != nil {
		return DevicePoll{}, err
	}
	if !won || d.UserID == nil {
		return DevicePoll{}, models.Errorf(models.CodeBadRequest, "The device code was already used; run `holdco login --device` again.")
	}
	grant, err := s.mintSessionKey(ctx, *d.UserID, "CLI session (device)")
	if err != nil {
		return DevicePoll{}, err
	}
	return DevicePoll{Status: DeviceComplete, Interval: interval, Grant: &grant}, nil
}

// DeviceRequest is what the approval page shows about a user code.
type DeviceRequest struct {
	UserCode  string
	Status    models.DeviceStatus
	Expired   bool
	ExpiresAt time.Time
}

// LookupDevice finds a pending grant by user code for the approval page.
func (s *Service) LookupDevice(ctx context.Context, userCode string) (DeviceRequest, error) {
	d, err := s.store.Identity().GetDeviceAuthorizationByUserCode(ctx, NormalizeUserCode(userCode))
	if errors.Is(err, models.ErrNotFound) {
		return DeviceRequest{}, models.Errorf(models.CodeNotFound, "No login request has the code %q; check the code shown by the CLI.", userCode)
	}
	if err != nil {
		return DeviceRequest{}, err
	}
	return DeviceRequest{UserCode: d.UserCode, Status: d.Status, Expired: !s.now().Before(d.ExpiresAt), ExpiresAt: d.ExpiresAt}, nil
}

// DecideDevice approves or denies a pending grant as the signed-in user.
func (s *Service) DecideDevice(ctx context.Context, p service.Principal, userCode string, approve bool) error {
	if !p.IsUser() {
		return models.Errorf(models.CodeForbidden, "Only a signed-in user can approve a CLI login.")
	}
	req, err := s.LookupDevice(ctx, userCode)
	if err != nil {
		return err
	}
	if req.Expired {
		return models.Errorf(models.CodeConflict, "This login request has expired; run `holdco login --device` again.")
	}
	to := models.DeviceDenied
	if approve {
		to = models.DeviceApproved
	}
	d, err := s.store.Identity().GetDeviceAuthorizationByUserCode(ctx, req.UserCode)
	if err != nil {
		return err
	}
	won, err := s.store.Identity().TransitionDevice(ctx, d.ID, models.DevicePending, to, &p.UserID)
	if err != nil {
		return err
	}
	if !won {
		return models.Errorf(models.CodeConflict, "This login request was already answered.")
	}
	return nil
}

// DeviceCSRFToken binds the approval form to the session and user code.
func (s *Service) DeviceCSRFToken(p service.Principal, userCode string) string {
	return s.sign.Derive("device-csrf", p.CredentialID+"|"+NormalizeUserCode(userCode))
}

// CheckDeviceCSRF verifies a token from DeviceCSRFToken in constant time.
func (s *Service) CheckDeviceCSRF(p service.Principal, userCode, token string) bool {
	return service.EqualHash(s.DeviceCSRFToken(p, userCode), token)
}
