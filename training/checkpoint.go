package training

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// checkpointMagic starts every checkpoint file.
const checkpointMagic = "shuffledp-train-checkpoint\n"

// checkpointVersion is bumped whenever the layout of checkpointState
// changes meaning.
const checkpointVersion = 1

// checkpointState is everything a resumed run needs to continue bit for bit:
// the model parameters, the state of the run's sequential generator (from
// which client sampling and every round's noise key are drawn) and the
// privacy ledger (the number of rounds composed), plus the parameters that
// must not change across a resume because they determine the privacy
// accounting or the random stream.
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

	Round        int
	LedgerRounds int
	RNG          []byte // rand.PCG MarshalBinary
	Params       []float64
}

// WriteCheckpoint writes the trainer's state to w: the magic line, a gob
// encoding of the state, and its SHA-256.
func (t *Trainer) WriteCheckpoint(w io.Writer) error {
	rng, err := t.master.MarshalBinary()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	st := checkpointState{
		Version: checkpointVersion,
		Model:   t.model.Name(), NumParams: t.model.NumParams(),
		Clients: t.cfg.Clients, Sample: t.cfg.Sample, Randomizer: t.cfg.Randomizer,
		ClipNorm: t.cfg.ClipNorm, Clip: t.cfg.Clip, ClampLinf: t.cfg.ClampLinf, Eps0: t.cfg.Eps0, Seed: t.cfg.Seed,
		Project: t.cfg.ProjectRadius, Crypto: t.cfg.CryptoNoise,
		Round: t.round, LedgerRounds: t.ledger.Rounds(), RNG: rng, Params: t.model.Params(),
	}
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(&st); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	sum := sha256.Sum256(body.Bytes())
	bw := bufio.NewWriter(w)
	bw.WriteString(checkpointMagic)
	bw.Write(body.Bytes())
	bw.Write(sum[:])
	return bw.Flush()
}

// SaveCheckpoint writes the checkpoint to path atomically (a temporary
// file in the same directory, then rename), so an interrupted write never
// leaves a truncated checkpoint.
func (t *Trainer) SaveCheckpoint(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := t.WriteCheckpoint(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// ReadCheckpoint restores the trainer's state from r. The trainer must have
// been created with the same model architecture and the same privacy- and
// randomness-relevant parameters (clients, sample, randomizer, clip-norm,
// clip, eps0, seed, projection); a mismatch is an error naming the flag.
// Epochs, learning rate, delta, target epsilon, evaluation period and
// workers may differ.
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
	if st.Version != checkpointVersion {
		return fmt.Errorf("resume: checkpoint version %d, this build reads %d", st.Version, checkpointVersion)
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
	case len(st.Params) != t.model.NumParams():
		return fmt.Errorf("resume: checkpoint holds %d parameters, model has %d", len(st.Params), t.model.NumParams())
	case st.Round < 0 || st.LedgerRounds < st.Round:
		return fmt.Errorf("resume: inconsistent checkpoint (round %d, ledger rounds %d)", st.Round, st.LedgerRounds)
	}
	if err := t.ledger.reset(st.LedgerRounds); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if err := t.master.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("resume: generator state: %w", err)
	}
	copy(t.model.Params(), st.Params)
	t.round = st.Round
	return nil
}

// LoadCheckpoint restores the trainer's state from the file at path.
func (t *Trainer) LoadCheckpoint(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	defer f.Close()
	return t.ReadCheckpoint(f)
}
