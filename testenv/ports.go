package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FreePort is a TCP port on 127.0.0.1 that nothing listens on, for a
// test that must name its port before the program under test binds it.
//
// It is picked outside the kernel's ephemeral range
// (net.ipv4.ip_local_port_range): a port from there (what listening on
// port 0 gives) is also the local end the kernel picks for outgoing
// connections, so between the test closing its probe and the program
// binding the port, any connection of any process (a Temporal client, a
// database pool) could take it: "port … is in use" under load. Outside
// that range only another program's explicit choice can, and ports are
// drawn at random from some twenty thousand and never handed out twice
// by one test binary.
func FreePort(t testing.TB) int {
	t.Helper()
	lo, hi := freePortRange()
	for range 200 {
		port := lo + rand.IntN(hi-lo)
		if !portsGiven.claim(port) {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		_ = l.Close()
		return port
	}
	t.Fatalf("testenv: no free port in [%d, %d)", lo, hi)
	return 0
}

// portsGiven are the ports FreePort gave in this process.
var portsGiven = &portSet{seen: map[int]bool{}}

type portSet struct {
	mu   sync.Mutex
	seen map[int]bool
}

func (s *portSet) claim(port int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[port] {
		return false
	}
	s.seen[port] = true
	return true
}

// freePortRange is where FreePort draws from: the ports below the
// ephemeral range, from 10000 (below it, well-known services' ports
// that a developer's machine may run).
func freePortRange() (lo, hi int) {
	lo, hi = 10000, 32768 // Linux's default ephemeral range starts at 32768
	if start, ok := ephemeralStart(); ok && start > lo+1000 {
		hi = start
	}
	return lo, hi
}

// ephemeralStart is the first port of the kernel's ephemeral range
// (Linux; false elsewhere).
func ephemeralStart() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	var start, end int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &start, &end); err != nil {
		return 0, false
	}
	return start, true
}
