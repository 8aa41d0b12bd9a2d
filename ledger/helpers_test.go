package ledger

import (
	"os"
	"time"
)

var fixedTime = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func mkdir(dir string) error { return os.MkdirAll(dir, 0o755) }

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
