package testenv

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FreePort's ports are below the kernel's ephemeral range (where
// outgoing connections take their local ports), free to bind, and never
// the same twice in one process.
func TestFreePortIsBelowTheEphemeralRangeAndFree(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		port := FreePort(t)
		assert.False(t, seen[port], "port %d given twice", port)
		seen[port] = true
		assert.GreaterOrEqual(t, port, 10000)
		if start, ok := ephemeralStart(); ok {
			assert.Less(t, port, start, "below the ephemeral range")
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		require.NoError(t, err)
		require.NoError(t, l.Close())
	}
}
