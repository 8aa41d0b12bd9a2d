package shard

import (
	"os"
	"testing"

	"github.com/shuffledp/shuffledp/internal/pgtest"
)

// TestMain runs the tests with one PostgreSQL server for the package,
// started by the first test that asks for one (a replica helper process
// starts none).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
