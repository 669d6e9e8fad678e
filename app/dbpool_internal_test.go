package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"holdco/config"
	"holdco/store"
)

func TestDBPoolByRolesAndSettings(t *testing.T) {
	assert.Equal(t, store.Pool{MaxConns: poolBusyRoles}, dbPool(config.Database{}, AllRoles))
	assert.Equal(t, store.Pool{MaxConns: poolBusyRoles}, dbPool(config.Database{}, []Role{RoleWorker}))
	assert.Equal(t, store.Pool{MaxConns: poolLightRoles}, dbPool(config.Database{}, []Role{RoleSites}))
	assert.Equal(t, store.Pool{MaxConns: poolLightRoles}, dbPool(config.Database{}, []Role{RoleOAuth, RoleSites}))
	assert.Equal(t, store.Pool{MaxConns: 8, MaxIdleConns: 2, ConnMaxLifetime: time.Minute},
		dbPool(config.Database{MaxConns: 8, MaxIdleConns: 2, ConnMaxLifetime: time.Minute}, []Role{RoleSites}), "the settings win")
}
