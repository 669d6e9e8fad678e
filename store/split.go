package store

// Storage is split by domain: each domain type holds the queries of its
// tables and reaches the shared core (the connection, InTx, the scopes)
// through the *Store it wraps. A use case asks for the domains it uses
// (st.Billing(), st.Files()...); a transaction hands its *Store to the
// same accessors, so a domain's queries run in whatever transaction
// they are given.
//
// Which table belongs to which domain follows the files: users.go,
// credentials.go... are Identity; credits.go, billing.go,
// reservations.go are Billing; and so on.

// Identity holds users, accounts (conglomerates), credentials, company
// API keys, attempt counters and the development identity provider.
type Identity struct{ *Store }

// OAuth holds the authorization server's clients, grants and tokens.
type OAuth struct{ *Store }

// Companies holds companies, their resources and provisioning, tasks,
// documents, the activity feed and the dashboard's reads.
type Companies struct{ *Store }

// Sites holds published sites, their deploys and repositories.
type Sites struct{ *Store }

// Billing holds the credit ledger, reservations and payments.
type Billing struct{ *Store }

// Sales holds prospects, the sales pipeline and e-mail.
type Sales struct{ *Store }

// Growth holds domains and the ad campaign.
type Growth struct{ *Store }

// Analytics holds the sites' analytics events and roll-ups.
type Analytics struct{ *Store }

// Files holds company files.
type Files struct{ *Store }

// Turns holds agent turns, their steps and scheduled runs.
type Turns struct{ *Store }

// Founding holds founding interviews.
type Founding struct{ *Store }

// Identity is the identity domain of s.
func (s *Store) Identity() Identity { return Identity{s} }

// OAuth is the authorization server's domain of s.
func (s *Store) OAuth() OAuth { return OAuth{s} }

// Companies is the companies domain of s.
func (s *Store) Companies() Companies { return Companies{s} }

// Sites is the sites domain of s.
func (s *Store) Sites() Sites { return Sites{s} }

// Billing is the billing domain of s.
func (s *Store) Billing() Billing { return Billing{s} }

// Sales is the sales domain of s.
func (s *Store) Sales() Sales { return Sales{s} }

// Growth is the growth domain of s.
func (s *Store) Growth() Growth { return Growth{s} }

// Analytics is the analytics domain of s.
func (s *Store) Analytics() Analytics { return Analytics{s} }

// Files is the files domain of s.
func (s *Store) Files() Files { return Files{s} }

// Turns is the turns domain of s.
func (s *Store) Turns() Turns { return Turns{s} }

// Founding is the founding domain of s.
func (s *Store) Founding() Founding { return Founding{s} }
