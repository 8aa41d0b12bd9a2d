package training

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/protocol"
)

// ClientLevelNote says what epsilon is for when clients hold several
// examples or take several local steps: printed wherever such a run's
// epsilon is (train's lines, the metrics records' neighbouring field, the
// dashboard's configuration).
const ClientLevelNote = "epsilon is for one client's whole data (replace-one at the client level: all its examples and its whole local update), not for one example"

// NeighbouringClient is metrics.Record.Neighbouring of a run whose clients
// hold several examples or take several local steps.
const NeighbouringClient = "client"

// validateClientData checks M, the partition and E, naming the flags, and
// fills in their defaults (M = 1, E = 1, the local step size the first
// rate of LR when E > 1).
func (c *Config) validateClientData() error {
	if c.ExamplesPerClient == 0 {
		c.ExamplesPerClient = 1
	}
	if err := c.Partition.Check(c.Clients, c.ExamplesPerClient); err != nil {
		return err
	}
	if c.LocalSteps == 0 {
		c.LocalSteps = 1
	}
	if c.LocalSteps < 1 || c.LocalSteps > protocol.MaxLocalSteps {
		return fmt.Errorf("local-steps must be in [1, %d], got %d", protocol.MaxLocalSteps, c.LocalSteps)
	}
	if c.LocalLR < 0 || math.IsNaN(c.LocalLR) || math.IsInf(c.LocalLR, 0) {
		return fmt.Errorf("local-lr must be >= 0 and finite (0 = the first rate of --lr), got %g", c.LocalLR)
	}
	if c.LocalSteps == 1 && c.LocalLR != 0 {
		return fmt.Errorf("local-lr applies to --local-steps > 1 only (one step reports the mean gradient), got %g", c.LocalLR)
	}
	if c.LocalSteps > 1 && c.LocalLR == 0 && len(c.LR.Rates) > 0 {
		c.LocalLR = c.LR.Rates[0]
	}
	if c.ClipDiagnostic && c.ClientLevel() {
		return errors.New("clip-diagnostic measures one example's gradient per client; not offered with --examples-per-client > 1 or --local-steps > 1")
	}
	return nil
}

// ClientLevel reports whether the run's clients hold several examples or
// take several local steps: its neighbouring relation is then one
// client's whole data (ClientLevelNote). The accounting is the same: the
// mechanism sees one clipped update per client either way.
func (c *Config) ClientLevel() bool {
	return c.ExamplesPerClient > 1 || c.LocalSteps > 1
}

// Population is the number of training examples the clients hold,
// Clients * ExamplesPerClient.
func (c *Config) Population() int { return c.Clients * max(c.ExamplesPerClient, 1) }

// localRun sets the local steps of r, the run's public configuration (E
// and its step size when E > 1; nothing otherwise, so a run of one step
// has the configuration it always had).
func (c *Config) localRun(r protocol.RunConfig) protocol.RunConfig {
	if c.LocalSteps > 1 {
		r.LocalSteps, r.LocalLR = c.LocalSteps, c.LocalLR
	}
	return r
}

// assign deals the population (the first Population() examples of train)
// to the clients by the run's partition, seeded by Seed.
func (c *Config) assign(train *data.Dataset) (data.Assignment, error) {
	return c.Partition.Assign(c.Clients, max(c.ExamplesPerClient, 1), train.Classes, train.Label, c.Seed)
}

// clientData is a simulation worker's view of one client's examples.
type clientData struct {
	idx []int
	exs []client.Example
}

// clientExamples returns client c's examples (views into the training
// set), held in w's scratch until its next call.
func (t *simulation) clientExamples(w *clientWorker, c int) []client.Example {
	d := &w.data
	d.idx = t.assignment.Examples(c, d.idx[:0])
	d.exs = d.exs[:0]
	for _, i := range d.idx {
		d.exs = append(d.exs, client.Example{X: t.train.Example(i), Label: t.train.Y[i]})
	}
	return d.exs
}

// clientDataFields fills the clients' data and local training into rec
// where they differ from the defaults, and its neighbouring unit.
func (c *Config) clientDataFields(rec *metrics.Record) {
	if c.ExamplesPerClient > 1 {
		rec.ExamplesPerClient = c.ExamplesPerClient
	}
	if p := c.Partition.Kind; p != "" && p != data.PartitionIndex {
		rec.Partition = c.Partition.String()
	}
	if c.LocalSteps > 1 {
		rec.LocalSteps, rec.LocalLR = c.LocalSteps, c.LocalLR
	}
	if c.ClientLevel() {
		rec.Neighbouring = NeighbouringClient
	}
}
