// Package identity holds who-is-calling use cases: authentication of
// every credential kind (web session, user key, personal access token,
// company key, admin credential), browser sign-in, the CLI's loopback and
// device flows, personal access tokens and the account (Me, deletion).
package identity
