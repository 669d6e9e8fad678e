package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"holdco/config"
	"holdco/service/usecases"
)

// Role is one duty a process can take on. `holdco serve` runs every role
// in one process; a scaled-out deployment runs each role (or a group of
// them) as its own replicas against one database and one Temporal cluster.
type Role string

const (
	// RoleAPI serves the REST API (HOLDCO_API_ADDR). It starts, signals and
	// queries workflows; it builds the identity provider and payments, but
	// no provisioning adapter.
	RoleAPI Role = "api"
	// RoleMCP serves the connector for AI assistants (HOLDCO_MCP_ADDR).
	RoleMCP Role = "mcp"
	// RoleOAuth serves the authorization server (HOLDCO_OAUTH_ADDR).
	RoleOAuth Role = "oauth"
	// RoleSites serves tenant sites on their own origin
	// (HOLDCO_SITES_ADDR): the store and the hosting adapter's read side.
	RoleSites Role = "sites"
	// RoleWorker runs the Temporal worker, its activities' adapters (git,
	// hosting, company databases) and the provisioning sweeper. Its
	// listener (HOLDCO_WORKER_HEALTH_ADDR) answers probes only.
	RoleWorker Role = "worker"
)

// AllRoles is what `holdco serve` runs by default, in start order of their
// listeners.
var AllRoles = []Role{RoleAPI, RoleMCP, RoleOAuth, RoleSites, RoleWorker}

// duty is what a role needs from the process.
type duty struct {
	// listenVar names the listener's setting; empty: the role has no
	// listener.
	listenVar string
	addr      func(config.Config) string
	// temporal: the role starts, signals or runs workflows, so the process
	// connects to Temporal (or starts the embedded server).
	temporal bool
	// blobs: the role reads or writes the blob store (files, run traces,
	// site deploys); repos: it opens the repositories (config.SplitState).
	blobs, repos bool
	// uses are the parts of the use-case layer the role serves; a process
	// builds the union of its roles' (App.services).
	uses usecases.Parts
}

var duties = map[Role]duty{
	// REST and the console serve every use case.
	RoleAPI: {listenVar: "HOLDCO_API_ADDR", addr: func(c config.Config) string { return c.API.Addr }, temporal: true, blobs: true, uses: usecases.All},
	// The connector calls the domains and introspects the authorization
	// server's tokens.
	RoleMCP: {listenVar: "HOLDCO_MCP_ADDR", addr: func(c config.Config) string { return c.MCP.Addr }, temporal: true, blobs: true, uses: usecases.All},
	// The authorization server signs users in and issues tokens: no
	// domain, no payment, blob or Temporal client.
	RoleOAuth: {listenVar: "HOLDCO_OAUTH_ADDR", addr: func(c config.Config) string { return c.OAuth.Addr }, uses: usecases.SignIn},
	// Sites are served from the database and the blob store alone.
	RoleSites: {listenVar: "HOLDCO_SITES_ADDR", addr: func(c config.Config) string { return c.Sites.Addr }, blobs: true},
	// The worker's adapters are built in startWorker; its listener
	// answers probes only. Its activities call the domains; nobody signs
	// in on it.
	RoleWorker: {listenVar: "HOLDCO_WORKER_HEALTH_ADDR", addr: func(c config.Config) string { return c.Worker.HealthAddr }, temporal: true, blobs: true, repos: true,
		uses: usecases.Domains},
}

// checkSplitState refuses, before anything starts, a process of some
// roles that would keep on its own disk what the other processes of a
// cluster must see (config.SplitState). A process of every role is the
// embedded default or a single machine, whatever it connects to.
func checkSplitState(cfg config.Config, roles []Role) error {
	if len(roles) == len(AllRoles) {
		return nil
	}
	var blobs, repos bool
	for _, r := range roles {
		blobs = blobs || duties[r].blobs
		repos = repos || duties[r].repos
	}
	return cfg.SplitState(blobs, repos)
}

func roleNames() string {
	names := make([]string, len(AllRoles))
	for i, r := range AllRoles {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// ParseRoles reads a comma-separated role list such as "api,worker".
func ParseRoles(s string) ([]Role, error) {
	var roles []Role
	for _, part := range strings.Split(s, ",") {
		r := Role(strings.TrimSpace(part))
		if r == "" {
			continue
		}
		if !slices.Contains(AllRoles, r) {
			return nil, fmt.Errorf("--roles: unknown role %q (valid: %s)", r, roleNames())
		}
		if !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	if len(roles) == 0 {
		return nil, errors.New("--roles: name at least one of " + roleNames())
	}
	return roles, nil
}
