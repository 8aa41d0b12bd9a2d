// Package metrics defines what a training run records at every evaluation:
// Record, one JSON object per line of the run's metrics file (--metrics, or
// DIR/metrics.jsonl of a state directory: statedir.MetricsLog writes it),
// with the accuracies, the losses, the privacy spent so far and the run's
// parameters, and Read, which reads such a file back (for plots, figures
// and the re-run check of committed results). It computes nothing: the
// training loop fills the records, and package figures draws them.
package metrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/shuffledp/shuffledp/internal/directed"
)

// Record is one evaluation, written as one JSON object per line by the
// --metrics file. Epsilon is null (nil) for the non-private baseline.
type Record struct {
	// Epoch is the number of epochs completed, rounds*k/n.
	Epoch float64 `json:"epoch"`
	// Round is the number of rounds completed.
	Round int `json:"round"`
	// TestAccuracy and TestLoss are measured on the evaluation set (the
	// test set, or the validation split when EvalSet says so), at the
	// model's parameters (the raw iterate).
	TestAccuracy *float64 `json:"test_accuracy"`
	TestLoss     *float64 `json:"test_loss"`
	// TestAccuracyEMA and TestLossEMA are measured at the exponential
	// moving average of the parameters (absent without one).
	TestAccuracyEMA *float64 `json:"test_accuracy_ema,omitempty"`
	TestLossEMA     *float64 `json:"test_loss_ema,omitempty"`
	// TrainLoss is the mean loss of the sampled clients' examples over the
	// rounds since the previous evaluation (null at round 0).
	TrainLoss *float64 `json:"train_loss"`
	// Epsilon is the (epsilon, Delta)-DP guarantee of all rounds so far
	// (null without a randomizer); RDPOrder is the order that attained it.
	Epsilon *float64 `json:"epsilon"`
	// EpsilonNeurIPS21 is the guarantee at Delta of the same rounds by
	// NeurIPS'21 Theorem 1 alone (bound neurips21-upper composed over the
	// ledger's events: the paper's own accounting, what `shuffledp account
	// --bound neurips21-upper` gives), for comparisons with the paper at
	// equal accounting; null without a randomizer. It is never below
	// Epsilon, which takes the pointwise minimum with every other bound.
	EpsilonNeurIPS21 *float64 `json:"epsilon_neurips21"`
	Delta            float64  `json:"delta"`
	RDPOrder         *float64 `json:"rdp_order,omitempty"`
	// OrderAtGridEdge warns that the best order was at the edge of the
	// accountant's order grid (a wider grid might give a smaller epsilon).
	OrderAtGridEdge bool `json:"rdp_order_at_grid_edge,omitempty"`
	// LedgerRounds (null without a randomizer) is the number of rounds the privacy ledger has debited
	// for the run, which Epsilon accounts for: at least Round, more if
	// rounds were released and then lost to a crash before a checkpoint.
	LedgerRounds *int64 `json:"ledger_rounds,omitempty"`
	// Bound is the run's bound, as its ledger records it: "best" (the
	// minimum over every proven route), "best-conjecture" (the opt-in
	// admitting conjectured bounds) or a named RDP bound. Epsilon is the
	// ledger's statement (ledger.Statement), the one number of the run.
	Bound string `json:"bound,omitempty"`
	// Route names the route attaining Epsilon (rdp, approx-dp, pld) and
	// BoundWinner the bound attaining it there (for the RDP route the
	// component winning at RDPOrder; RDPOrder is absent for the others).
	Route       string `json:"route,omitempty"`
	BoundWinner string `json:"bound_winner,omitempty"`
	// Conjecture is true when Epsilon rests on a conjecture (a run under
	// "best-conjecture" whose epsilon a conjectured bound attains): it is
	// then not a proven guarantee.
	Conjecture bool `json:"conjecture,omitempty"`
	// EvaluatedAt, when set, is the number of rounds at which the winning
	// costly route (approximate DP, PLD) was evaluated: the ledger's
	// checkpoint above LedgerRounds (ledger.Checkpoint).
	EvaluatedAt int64 `json:"evaluated_at_rounds,omitempty"`
	// LR is the learning rate of the last round.
	LR float64 `json:"lr"`
	// Optimizer is the server's optimizer with its parameters
	// (server.Optimizer.String), absent for SGD; EMA the decay of the
	// evaluated average, absent without one.
	Optimizer string  `json:"optimizer,omitempty"`
	EMA       float64 `json:"ema,omitempty"`
	// WallSeconds is the wall time since this process started training
	// (a resumed run starts again from 0).
	WallSeconds float64 `json:"wall_seconds"`
	// ClientUpdatesPerSec is the throughput (per-client gradient, clip,
	// randomize, shuffle and aggregate) since the previous evaluation,
	// evaluation time excluded.
	ClientUpdatesPerSec float64 `json:"client_updates_per_sec"`
	// Command is the command line that produced the record .
	Command []string `json:"command,omitempty"`
	// EvalSet is "validation" when the accuracies and losses are measured
	// on a split held out of the training set (Config.EvalSet); absent for
	// the test set.
	EvalSet string `json:"eval_set,omitempty"`
	// Run parameters, repeated on every line so a file is self-describing.
	Model      string  `json:"model"`
	Randomizer string  `json:"randomizer"`
	ClipNorm   string  `json:"clip_norm"`
	ClampLinf  bool    `json:"linf_clamp,omitempty"`
	Clip       float64 `json:"clip"`
	Eps0       float64 `json:"eps0"`
	Clients    int     `json:"clients"`
	Sample     int     `json:"sample"`
	Seed       uint64  `json:"seed"`
	// Gaussian runs (gaussian.go): the noise multiplier, check-in or
	// Poisson participation with its rate, the summed-noise simulation,
	// and the mean batch size over the rounds since the previous
	// evaluation (with a rate the batch size is random; Sample is then its
	// expected value). Absent for the eps0-LDP randomizers.
	Sigma         float64  `json:"sigma,omitempty"`
	Participation string   `json:"participation,omitempty"`
	Rate          float64  `json:"rate,omitempty"`
	NoiseSum      bool     `json:"noise_sum,omitempty"`
	MeanBatch     *float64 `json:"mean_batch,omitempty"`
	// Adjacency is the neighbouring relation Epsilon is for
	// (Config.Adjacency; event.Event.Adjacency), on the Gaussian runs'
	// records; absent in records written before it existed (zero-out for
	// gaussian, add-remove for central-gaussian) and for the eps0-LDP
	// randomizers (replace-one).
	Adjacency string `json:"adjacency,omitempty"`
	// ExamplesPerClient, Partition, LocalSteps and LocalLR are the
	// clients' data and local training (train --examples-per-client,
	// --partition, --local-steps, --local-lr), absent at their defaults
	// (one example a client, client i holding example i, one step).
	// Neighbouring is the unit Epsilon protects: "client" when clients
	// hold several examples or take several local steps (replace-one at
	// the client level: one client's whole data replaced), absent where a
	// client holds one example and the two coincide.
	ExamplesPerClient int     `json:"examples_per_client,omitempty"`
	Partition         string  `json:"partition,omitempty"`
	LocalSteps        int     `json:"local_steps,omitempty"`
	LocalLR           float64 `json:"local_lr,omitempty"`
	Neighbouring      string  `json:"neighbouring,omitempty"`
	// ClipBias is the SIMULATION-ONLY diagnostic of train --clip-diagnostic
	// (absent without it): the clip's bias measured on the training
	// clients' own examples at the evaluated parameters.
	ClipBias *ClipBias `json:"clip_bias,omitempty"`
}

// ClipBias measures, at one point of a run, how much the clients' clip
// (an l_p clip, or R_inf's per-coordinate clamp) biases the average the
// server estimates. SIMULATION ONLY: it reads every measured client's
// clear gradient, which no role of a deployment ever sees, so it exists
// only for simulated runs on the simulator's own data (train
// --clip-diagnostic; a networked run refuses the flag) and costs no
// privacy only because nothing of it is released by a deployment.
//
// With g_i the gradient of client i and x_i = clip(g_i) its clipped
// gradient, g = mean g_i is the gradient of the training loss and
// x = mean x_i the mean the randomizers estimate without bias.
type ClipBias struct {
	// Clients is the number of clients measured (every training client).
	Clients int `json:"clients"`
	// ClippedClients is the fraction of clients whose gradient the clip
	// changed.
	ClippedClients float64 `json:"clipped_clients"`
	// ClampedCoordinates is the fraction of the clients' coordinates
	// outside [-C, C] (the per-coordinate clamp; also reported for the
	// other clips, whose clipped coordinates it does not count).
	ClampedCoordinates float64 `json:"clamped_coordinates"`
	// TrueNorm is ||g||, ClippedNorm ||x||.
	TrueNorm    float64 `json:"true_norm"`
	ClippedNorm float64 `json:"clipped_norm"`
	// Cosine is cos(x, g): 1 for a clip that only rescales the mean.
	Cosine float64 `json:"cosine"`
	// Bias is ||x - s g|| / ||x|| at the s minimising it (the part of x
	// that no rescaling of g explains: sqrt(1 - Cosine^2)).
	Bias float64 `json:"bias"`
	// CentredCosine and CentredNorm (logistic regression only; absent
	// otherwise) are Cosine and ClippedNorm after removing from x and g
	// the component common to all classes (for every input, and for the
	// biases, the mean over classes): softmax predictions do not change
	// along it, and logistic regression's true gradient has none (its
	// softmax residuals sum to zero), while a clamp cuts the true class's
	// large residual more than the others' small ones and adds one.
	CentredCosine *float64 `json:"centred_cosine,omitempty"`
	CentredNorm   *float64 `json:"centred_norm,omitempty"`
	// MeanClippedSq is mean ||x_i||^2.
	MeanClippedSq float64 `json:"mean_clipped_sq"`
	// NoiseNorm (R_inf only; absent otherwise) is the root of the expected
	// squared distance of a round's average of k reports from the mean of
	// the sampled x_i: sqrt((M^2 - MeanClippedSq) / k), M the magnitude
	// of R_inf's report (a d c C).
	NoiseNorm *float64 `json:"noise_norm,omitempty"`
}

// Read reads a JSONL metrics file written by a run (one Record per
// line; blank lines are skipped). A record with a negative epsilon is an
// error: a spent privacy budget is never below zero.
func Read(path string) ([]Record, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer fh.Close()
	var recs []Record
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("metrics: %s line %d: %w", path, n, err)
		}
		if r.Epsilon != nil && *r.Epsilon < 0 {
			return nil, fmt.Errorf("metrics: %s line %d: epsilon %g is negative (a spent privacy budget is >= 0)", path, n, *r.Epsilon)
		}
		if r.EpsilonNeurIPS21 != nil && *r.EpsilonNeurIPS21 < 0 {
			return nil, fmt.Errorf("metrics: %s line %d: epsilon_neurips21 %g is negative", path, n, *r.EpsilonNeurIPS21)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
	}
	return recs, nil
}

// Format formats *v with the fmt verb format, or "n/a" for nil (a field
// absent from the record, such as the non-private baseline's epsilon).
func Format(v *float64, format string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *v)
}

// FormatUpper prints the upper bound *v (an epsilon) with digits
// significant digits rounded up (directed.Upper), or "n/a" when v is nil.
func FormatUpper(v *float64, digits int) string {
	if v == nil {
		return "n/a"
	}
	return directed.Upper(*v, digits)
}

// Progress is the record as a progress line's text: "epoch E acc A eps
// EPS" (n/a for an absent accuracy or epsilon).
func (r Record) Progress() string {
	eps := FormatUpper(r.Epsilon, 4)
	if r.Conjecture && r.Epsilon != nil {
		eps += " (CONJECTURE)"
	}
	return fmt.Sprintf("epoch %.4g acc %s eps %s", r.Epoch, Format(r.TestAccuracy, "%.4f"), eps)
}
