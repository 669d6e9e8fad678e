package devoidc_test

import (
	"testing"

	"holdco/testenv"
)

// TestMain is testenv.Main: the test settings, and under
// TEST_DATABASE_URL the Postgres test schemas reused from test to test.
func TestMain(m *testing.M) { testenv.Main(m) }
