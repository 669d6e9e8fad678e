package app

import (
	"slices"

	"holdco/config"
	"holdco/store"
)

// Postgres pool sizes by role, when HOLDCO_DB_MAX_CONNS is 0: the api,
// connector and worker roles run requests and activities that each hold
// a connection; a process that is only sites or only the authorization
// server (or both) reads little and needs few.
const (
	poolBusyRoles  = 20
	poolLightRoles = 5
)

// dbPool is the process's Postgres pool: the settings, or the roles'
// default size.
func dbPool(db config.Database, roles []Role) store.Pool {
	p := store.Pool{MaxConns: db.MaxConns, MaxIdleConns: db.MaxIdleConns, ConnMaxLifetime: db.ConnMaxLifetime}
	if p.MaxConns == 0 {
		p.MaxConns = poolLightRoles
		if slices.ContainsFunc(roles, func(r Role) bool { return r == RoleAPI || r == RoleMCP || r == RoleWorker }) {
			p.MaxConns = poolBusyRoles
		}
	}
	return p
}
