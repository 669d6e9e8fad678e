package devoidc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"holdco/models"
)

// Lifetimes of the provider's state.
const (
	// requestTTL bounds how long a sign-in (and its code) may take.
	requestTTL = 10 * time.Minute
	// tokenTTL is an access token's life (the relying party reads the
	// userinfo right after the exchange).
	tokenTTL = 5 * time.Minute
)

// Request is a sign-in in progress: the client's authorization request,
// then the user who signed in.
type Request struct {
	ID        string
	Auth      oidc.AuthRequest
	UserID    string
	AuthTime  time.Time
	Done      bool
	ExpiresAt time.Time
}

// Token is an issued access token (its id).
type Token struct {
	ID, Subject, ClientID string
	Scopes                []string
	ExpiresAt             time.Time
}

// State keeps the sign-ins in progress, their codes and the access
// tokens. Reads answer errNotFound (wrapped) for what is missing or
// expired. StoredState keeps them in the database, so that behind a load
// balancer any process finishes a sign-in another one started; MemoryState
// serves one process.
type State interface {
	CreateRequest(ctx context.Context, r Request) error
	Request(ctx context.Context, id string) (Request, error)
	RequestByCode(ctx context.Context, code string) (Request, error)
	// SetCode records the code issued for the sign-in.
	SetCode(ctx context.Context, id, code string) error
	// Complete marks the sign-in done by userID.
	Complete(ctx context.Context, id, userID string, at time.Time) error
	// DeleteRequest removes a sign-in and its code (redeemed) and says
	// whether it was there.
	DeleteRequest(ctx context.Context, id string) (bool, error)
	CreateToken(ctx context.Context, t Token) error
	Token(ctx context.Context, id string) (Token, error)
	DeleteToken(ctx context.Context, id string) error
}

// MemoryState keeps the state in this process (tests, a single process).
type MemoryState struct {
	now func() time.Time

	mu       sync.Mutex
	requests map[string]Request
	codes    map[string]string // code → request id
	tokens   map[string]Token
}

var _ State = (*MemoryState)(nil)

// NewMemoryState returns an empty state.
func NewMemoryState() *MemoryState {
	return &MemoryState{now: time.Now, requests: map[string]Request{}, codes: map[string]string{}, tokens: map[string]Token{}}
}

func (m *MemoryState) CreateRequest(_ context.Context, r Request) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(m.now())
	m.requests[r.ID] = r
	return nil
}

// sweep drops what expired; called with mu held.
func (m *MemoryState) sweep(now time.Time) {
	for id, r := range m.requests {
		if !now.Before(r.ExpiresAt) {
			delete(m.requests, id)
		}
	}
	for code, id := range m.codes {
		if _, ok := m.requests[id]; !ok {
			delete(m.codes, code)
		}
	}
	for id, t := range m.tokens {
		if !now.Before(t.ExpiresAt) {
			delete(m.tokens, id)
		}
	}
}

func (m *MemoryState) request(id string) (Request, error) {
	r, ok := m.requests[id]
	if !ok || !m.now().Before(r.ExpiresAt) {
		return Request{}, fmt.Errorf("%w: auth request %s", errNotFound, id)
	}
	return r, nil
}

func (m *MemoryState) Request(_ context.Context, id string) (Request, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.request(id)
}

func (m *MemoryState) RequestByCode(_ context.Context, code string) (Request, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.codes[code]
	if !ok {
		return Request{}, fmt.Errorf("%w: code", errNotFound)
	}
	return m.request(id)
}

func (m *MemoryState) SetCode(_ context.Context, id, code string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.request(id); err != nil {
		return err
	}
	m.codes[code] = id
	return nil
}

func (m *MemoryState) Complete(_ context.Context, id, userID string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.request(id)
	if err != nil {
		return err
	}
	r.UserID, r.Done, r.AuthTime = userID, true, at
	m.requests[id] = r
	return nil
}

func (m *MemoryState) DeleteRequest(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.requests[id]
	delete(m.requests, id)
	for code, rid := range m.codes {
		if rid == id {
			delete(m.codes, code)
		}
	}
	return ok, nil
}

func (m *MemoryState) CreateToken(_ context.Context, t Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens[t.ID] = t
	return nil
}

func (m *MemoryState) Token(_ context.Context, id string) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[id]
	if !ok || !m.now().Before(t.ExpiresAt) {
		return Token{}, fmt.Errorf("%w: token", errNotFound)
	}
	return t, nil
}

func (m *MemoryState) DeleteToken(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tokens, id)
	return nil
}

// StateRows is where StoredState keeps the state (holdco's store): rows
// of models.DevIdPAuthRequest and models.DevIdPToken, read only while
// unexpired at the time given, with models.ErrNotFound.
type StateRows interface {
	CreateDevIdPAuthRequest(ctx context.Context, r models.DevIdPAuthRequest) error
	DevIdPAuthRequest(ctx context.Context, id string, at time.Time) (models.DevIdPAuthRequest, error)
	DevIdPAuthRequestByCode(ctx context.Context, codeHash string, at time.Time) (models.DevIdPAuthRequest, error)
	UpdateDevIdPAuthRequest(ctx context.Context, id string, at time.Time, set map[string]any) error
	DeleteDevIdPAuthRequest(ctx context.Context, id string) (bool, error)
	CreateDevIdPToken(ctx context.Context, t models.DevIdPToken) error
	DevIdPToken(ctx context.Context, id string, at time.Time) (models.DevIdPToken, error)
	DeleteDevIdPToken(ctx context.Context, id string) error
}

// StoredState keeps the state in database rows shared by every process:
// a sign-in started on one finishes on another. Codes are kept as their
// SHA-256; expired rows are never read and are deleted by the store's
// sign-in code sweep.
type StoredState struct {
	Rows StateRows
	Now  func() time.Time // nil: the wall clock
}

var _ State = StoredState{}

func (s StoredState) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func codeHash(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// stateError maps the store's not-found to errNotFound.
func stateError(err error, what string) error {
	if errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("%w: %s", errNotFound, what)
	}
	return err
}

func (s StoredState) CreateRequest(ctx context.Context, r Request) error {
	auth, err := json.Marshal(r.Auth)
	if err != nil {
		return fmt.Errorf("devoidc: encode auth request: %w", err)
	}
	return s.Rows.CreateDevIdPAuthRequest(ctx, models.DevIdPAuthRequest{ID: r.ID, ClientID: r.Auth.ClientID, Request: string(auth),
		CreatedAt: s.now(), ExpiresAt: r.ExpiresAt})
}

func requestOf(row models.DevIdPAuthRequest) (Request, error) {
	r := Request{ID: row.ID, UserID: row.UserID, Done: row.Done, ExpiresAt: row.ExpiresAt}
	if row.AuthTime != nil {
		r.AuthTime = *row.AuthTime
	}
	if err := json.Unmarshal([]byte(row.Request), &r.Auth); err != nil {
		return Request{}, fmt.Errorf("devoidc: decode auth request %s: %w", row.ID, err)
	}
	return r, nil
}

func (s StoredState) Request(ctx context.Context, id string) (Request, error) {
	row, err := s.Rows.DevIdPAuthRequest(ctx, id, s.now())
	if err != nil {
		return Request{}, stateError(err, "auth request "+id)
	}
	return requestOf(row)
}

func (s StoredState) RequestByCode(ctx context.Context, code string) (Request, error) {
	row, err := s.Rows.DevIdPAuthRequestByCode(ctx, codeHash(code), s.now())
	if err != nil {
		return Request{}, stateError(err, "code")
	}
	return requestOf(row)
}

func (s StoredState) SetCode(ctx context.Context, id, code string) error {
	return stateError(s.Rows.UpdateDevIdPAuthRequest(ctx, id, s.now(), map[string]any{"code_hash": codeHash(code)}), "auth request "+id)
}

func (s StoredState) Complete(ctx context.Context, id, userID string, at time.Time) error {
	return stateError(s.Rows.UpdateDevIdPAuthRequest(ctx, id, s.now(), map[string]any{"user_id": userID, "done": true, "auth_time": at.UTC()}),
		"auth request "+id)
}

func (s StoredState) DeleteRequest(ctx context.Context, id string) (bool, error) {
	return s.Rows.DeleteDevIdPAuthRequest(ctx, id)
}

func (s StoredState) CreateToken(ctx context.Context, t Token) error {
	return s.Rows.CreateDevIdPToken(ctx, models.DevIdPToken{ID: t.ID, Subject: t.Subject, ClientID: t.ClientID,
		Scopes: strings.Join(t.Scopes, " "), CreatedAt: s.now(), ExpiresAt: t.ExpiresAt})
}

func (s StoredState) Token(ctx context.Context, id string) (Token, error) {
	row, err := s.Rows.DevIdPToken(ctx, id, s.now())
	if err != nil {
		return Token{}, stateError(err, "token")
	}
	return Token{ID: row.ID, Subject: row.Subject, ClientID: row.ClientID, Scopes: strings.Fields(row.Scopes), ExpiresAt: row.ExpiresAt}, nil
}

func (s StoredState) DeleteToken(ctx context.Context, id string) error {
	return s.Rows.DeleteDevIdPToken(ctx, id)
}
