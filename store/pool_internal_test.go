package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An unset idle bound keeps every connection of the pool while idle (a
// lower bound made a swinging load close and reopen connections, each
// new one a backend and its statements prepared again); a set one is
// kept, at most the maximum.
func TestPoolKeepsEveryConnectionIdleByDefault(t *testing.T) {
	assert.Equal(t, Pool{MaxConns: DefaultMaxConns, MaxIdleConns: DefaultMaxConns, ConnMaxLifetime: DefaultConnMaxLifetime}, Pool{}.withDefaults())
	assert.Equal(t, 7, Pool{MaxConns: 7}.withDefaults().MaxIdleConns)
	assert.Equal(t, 3, Pool{MaxConns: 7, MaxIdleConns: 3}.withDefaults().MaxIdleConns)
	assert.Equal(t, 7, Pool{MaxConns: 7, MaxIdleConns: 9}.withDefaults().MaxIdleConns)
}
