package store

// Storage is split by domain: each domain type holds the queries of its
// tables and wraps the shared core: the connection and its settings (the
// Store's fields) without the Store's methods, so a domain's method set is
// its own queries, not every table's. A domain reaches InTx, the scopes
// and the shared helpers through store(). A use case asks for the domains it uses
// (st.Billing(), st.Files()...); a transaction hands its *Store to the
// same accessors, so a domain's queries run in whatever transaction
// they are given.
//
// Which table belongs to which domain follows the files: users.go,
// credentials.go... are Identity; credits.go, billing.go,
// reservations.go are Billing; and so on.

// core is the Store's state without its methods.
type core Store

// store is the Store the core belongs to (or the transaction's).
func (c *core) store() *Store { return (*Store)(c) }

// Identity holds users, accounts (conglomerates), credentials, company
// API keys, attempt counters and the development identity provider.
type Identity struct{ *core }

// OAuth holds the authorization server's clients, grants and tokens.
type OAuth struct{ *core }

// Companies holds companies, their resources and provisioning, tasks,
// documents, the activity feed and the dashboard's reads.
type Companies struct{ *core }

// Sites holds published sites, their deploys and repositories.
type Sites struct{ *core }

// Billing holds the credit ledger, reservations and payments.
type Billing struct{ *core }

// Sales holds prospects, the sales pipeline and e-mail.
type Sales struct{ *core }

// Growth holds domains and the ad campaign.
type Growth struct{ *core }

// Analytics holds the sites' analytics events and roll-ups.
type Analytics struct{ *core }

// Files holds company files.
type Files struct{ *core }

// Turns holds agent turns, their steps and scheduled runs.
type Turns struct{ *core }

// Founding holds founding interviews.
type Founding struct{ *core }

// Identity is the identity domain of s.
func (s *Store) Identity() Identity { return Identity{(*core)(s)} }

// OAuth is the authorization server's domain of s.
func (s *Store) OAuth() OAuth { return OAuth{(*core)(s)} }

// Companies is the companies domain of s.
func (s *Store) Companies() Companies { return Companies{(*core)(s)} }

// Sites is the sites domain of s.
func (s *Store) Sites() Sites { return Sites{(*core)(s)} }

// Billing is the billing domain of s.
func (s *Store) Billing() Billing { return Billing{(*core)(s)} }

// Sales is the sales domain of s.
func (s *Store) Sales() Sales { return Sales{(*core)(s)} }

// Growth is the growth domain of s.
func (s *Store) Growth() Growth { return Growth{(*core)(s)} }

// Analytics is the analytics domain of s.
func (s *Store) Analytics() Analytics { return Analytics{(*core)(s)} }

// Files is the files domain of s.
func (s *Store) Files() Files { return Files{(*core)(s)} }

// Turns is the turns domain of s.
func (s *Store) Turns() Turns { return Turns{(*core)(s)} }

// Founding is the founding domain of s.
func (s *Store) Founding() Founding { return Founding{(*core)(s)} }
