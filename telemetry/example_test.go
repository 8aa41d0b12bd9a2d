package telemetry_test

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shuffledp/shuffledp/shuffler"
	"github.com/shuffledp/shuffledp/telemetry"
)

// A shuffler counts what it refuses under a closed set of reasons and
// records every released batch.
func Example() {
	reg := telemetry.NewRegistry()
	m, err := telemetry.NewShufflerMetrics(reg)
	if err != nil {
		panic(err)
	}
	m.ReportAccepted()
	m.ReportRejected(telemetry.Rejection(fmt.Errorf("round 4: %w", shuffler.ErrNotSampled)))
	m.RoundReleased(1, 3*time.Millisecond, 0.05, 1)
	n, _ := testutil.GatherAndCount(reg, "shuffledp_shuffler_reports_rejected_total")
	fmt.Println(telemetry.Rejection(shuffler.ErrDuplicate), n)
	// Output: duplicate 12
}
