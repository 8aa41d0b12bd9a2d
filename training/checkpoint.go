package training

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"

	"github.com/shuffledp/shuffledp/server"
)

// checkpointMagic starts every checkpoint file.
const checkpointMagic = "shuffledp-train-checkpoint\n"

// checkpointVersion is bumped whenever the layout of checkpointState
// changes meaning. Version 1 (one flat state of the single-struct trainer)
// and version 2 (roles, before the server had an optimizer or an EMA) are
// still read; both were written by plain SGD without EMA, and resume only
// into such a run.
const checkpointVersion = 3

// checkpointState is everything a resumed run needs to continue bit for bit,
// by role: the server's (model parameters and steps taken), the shuffler's
// simulation state (the run's sequential generator, from which client
// sampling and every round's noise key are drawn, and the last round id).
// The privacy budget is not here: the ledger (package ledger) owns it, and
// a checkpoint older than the ledger's last debit never rolls it back. The
// parameters that must not change across a resume
// because they determine the privacy accounting or the random stream are
// checked.
type checkpointState struct {
	Version int

	Model      string
	NumParams  int
	Clients    int
	Sample     int
	Randomizer string
	ClipNorm   string
	Clip       float64
	ClampLinf  bool
	Eps0       float64
	Seed       uint64
	Project    float64
	Crypto     bool
	// Gaussian holds the Gaussian runs' parameters (zero for the others
	// and in checkpoints written before they existed).
	Gaussian gaussianParams

	Server   serverState
	Shuffler shufflerState

	// Version 1 fields (read only).
	Round        int
	LedgerRounds int
	RNG          []byte
	Params       []float64
}

// serverState is the server role's state: its model, and (version 3) its
// optimizer and EMA with the parameters that give their state meaning.
type serverState struct {
	Steps  int64
	Params []float64

	Optimizer                       string // server.Optimizer.Kind()
	Momentum, Beta1, Beta2, AdamEps float64
	EMA                             float64
	Velocity, Moment1, Moment2      []float64
	Average                         []float64
}

// transportState is a transport whose state a checkpoint keeps: the
// simulation's shuffler (its generator and last round id); a networked
// server's transport keeps the format with the initial generator state.
type transportState interface {
	shufflerState() (shufflerState, error)
	restoreShuffler(shufflerState) error
}

// shufflerState is the shuffler role's simulation state. SIMULATION ONLY:
// a deployment's shuffler draws from crypto/rand and has no generator to
// save.
type shufflerState struct {
	RNG       []byte // rand.PCG MarshalBinary
	LastRound int64  // last round id assigned
}

// WriteCheckpoint writes the trainer's state to w: the magic line, a gob
// encoding of the state, and its SHA-256.
func (t *Trainer) WriteCheckpoint(w io.Writer) error {
	shuf, err := t.transport.(transportState).shufflerState()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	st := checkpointState{
		Version: checkpointVersion,
		Model:   t.model.Name(), NumParams: t.model.NumParams(),
		Clients: t.cfg.Clients, Sample: t.cfg.Sample, Randomizer: t.cfg.Randomizer,
		ClipNorm: t.cfg.ClipNorm, Clip: t.cfg.Clip, ClampLinf: t.cfg.ClampLinf, Eps0: t.cfg.Eps0, Seed: t.cfg.Seed,
		Project: t.cfg.ProjectRadius, Crypto: t.cfg.CryptoNoise, Gaussian: t.cfg.gaussianParams(),
		Server:   t.serverState(),
		Shuffler: shuf,
	}
	return encodeCheckpoint(w, &st)
}

// encodeCheckpoint writes the magic line, the gob encoding of st and its
// SHA-256.
func encodeCheckpoint(w io.Writer, st any) error {
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(st); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	sum := sha256.Sum256(body.Bytes())
	bw := bufio.NewWriter(w)
	bw.WriteString(checkpointMagic)
	bw.Write(body.Bytes())
	bw.Write(sum[:])
	return bw.Flush()
}

// serverState returns the server's checkpointed state.
func (t *Trainer) serverState() serverState {
	st, o := t.server.State(), t.cfg.Optimizer
	return serverState{
		Steps: st.Steps, Params: st.Params,
		Optimizer: o.Kind(), Momentum: o.Momentum, Beta1: o.Beta1, Beta2: o.Beta2, AdamEps: o.Epsilon, EMA: t.cfg.EMA,
		Velocity: st.Velocity, Moment1: st.Moment1, Moment2: st.Moment2, Average: st.Average,
	}
}

// ReadCheckpoint restores the trainer's state from r. The trainer must have
// been created with the same model architecture and the same privacy- and
// randomness-relevant parameters (clients, sample, randomizer, clip-norm,
// clip, eps0, seed, projection), and the same server optimizer with the
// same parameters and EMA decay (their state means nothing under others);
// a mismatch is an error naming the flag. Epochs, learning rate schedule,
// delta, target epsilon, evaluation period and workers may differ.
func (t *Trainer) ReadCheckpoint(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if !bytes.HasPrefix(raw, []byte(checkpointMagic)) {
		return errors.New("resume: not a shuffledp training checkpoint (bad magic)")
	}
	raw = raw[len(checkpointMagic):]
	if len(raw) < sha256.Size {
		return errors.New("resume: checkpoint truncated")
	}
	body, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return errors.New("resume: checkpoint corrupt (SHA-256 mismatch)")
	}
	var st checkpointState
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&st); err != nil {
		return fmt.Errorf("resume: decoding checkpoint: %w", err)
	}
	switch st.Version {
	case 1: // the single-struct trainer: round ids were 1..rounds
		st.Server = serverState{Steps: int64(st.Round), Params: st.Params}
		st.Shuffler = shufflerState{RNG: st.RNG, LastRound: int64(st.LedgerRounds)}
	case 2:
	case checkpointVersion:
	default:
		return fmt.Errorf("resume: checkpoint version %d, this build reads 1 and %d", st.Version, checkpointVersion)
	}
	c := t.cfg
	mismatch := func(flag string, was, now any) error {
		return fmt.Errorf("resume: %s was %v in the checkpoint, now %v; it must not change across a resume", flag, was, now)
	}
	switch {
	case st.Model != t.model.Name() || st.NumParams != t.model.NumParams():
		return mismatch("model", fmt.Sprintf("%s (%d params)", st.Model, st.NumParams), fmt.Sprintf("%s (%d params)", t.model.Name(), t.model.NumParams()))
	case st.Clients != c.Clients:
		return mismatch("clients", st.Clients, c.Clients)
	case st.Sample != c.Sample:
		return mismatch("sample", st.Sample, c.Sample)
	case st.Randomizer != c.Randomizer:
		return mismatch("randomizer", st.Randomizer, c.Randomizer)
	case st.ClipNorm != c.ClipNorm:
		return mismatch("clip-norm", st.ClipNorm, c.ClipNorm)
	case st.Clip != c.Clip:
		return mismatch("clip", st.Clip, c.Clip)
	case st.ClampLinf != c.ClampLinf:
		return mismatch("linf-clip clamp", st.ClampLinf, c.ClampLinf)
	case st.Eps0 != c.Eps0:
		return mismatch("eps0", st.Eps0, c.Eps0)
	case st.Seed != c.Seed:
		return mismatch("seed", st.Seed, c.Seed)
	case st.Project != c.ProjectRadius:
		return mismatch("project-radius", st.Project, c.ProjectRadius)
	case st.Crypto != c.CryptoNoise:
		return mismatch("crypto-noise", st.Crypto, c.CryptoNoise)
	case st.Gaussian != c.gaussianParams():
		return mismatch("sigma, participation, rate, noise-sum or adjacency", st.Gaussian, c.gaussianParams())
	case st.Version < 3 && (c.Optimizer.Kind() != server.OptimizerSGD || c.EMA != 0):
		return fmt.Errorf("resume: the checkpoint (version %d) was written by plain SGD without EMA, before the server had an optimizer; it resumes only with --optimizer sgd and --ema 0, not %s and ema %g",
			st.Version, c.Optimizer, c.EMA)
	case st.Version >= 3 && st.Server.Optimizer != c.Optimizer.Kind():
		return mismatch("optimizer", st.Server.Optimizer, c.Optimizer.Kind())
	case st.Version >= 3 && st.Server.Momentum != c.Optimizer.Momentum:
		return mismatch("momentum", st.Server.Momentum, c.Optimizer.Momentum)
	case st.Version >= 3 && (st.Server.Beta1 != c.Optimizer.Beta1 || st.Server.Beta2 != c.Optimizer.Beta2):
		return mismatch("adam-betas", fmt.Sprintf("%g,%g", st.Server.Beta1, st.Server.Beta2), fmt.Sprintf("%g,%g", c.Optimizer.Beta1, c.Optimizer.Beta2))
	case st.Version >= 3 && st.Server.AdamEps != c.Optimizer.Epsilon:
		return mismatch("adam-eps", st.Server.AdamEps, c.Optimizer.Epsilon)
	case st.Version >= 3 && st.Server.EMA != c.EMA:
		return mismatch("ema", st.Server.EMA, c.EMA)
	case len(st.Server.Params) != t.model.NumParams():
		return fmt.Errorf("resume: checkpoint holds %d parameters, model has %d", len(st.Server.Params), t.model.NumParams())
	case st.Server.Steps < 0 || st.Shuffler.LastRound < 0:
		return fmt.Errorf("resume: inconsistent checkpoint (steps %d, last round %d)", st.Server.Steps, st.Shuffler.LastRound)
	}
	if err := t.server.Restore(server.State{Steps: st.Server.Steps, Params: st.Server.Params, Velocity: st.Server.Velocity,
		Moment1: st.Server.Moment1, Moment2: st.Server.Moment2, Average: st.Server.Average}); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if err := t.transport.(transportState).restoreShuffler(st.Shuffler); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	return nil
}
