package testenv

import "time"

// EventualBound is the deadline for waiting on something that happens
// eventually (a workflow's end, a row's state, a server's start): a bound
// that only a broken program reaches, never an expectation of how fast a
// machine is. Tests wait with require.Eventually(t, cond, EventualBound,
// tick) or a context with this timeout; a loaded 2-core machine running
// -race is many times slower than an idle one, and that must not fail a
// test.
const EventualBound = 2 * time.Minute
