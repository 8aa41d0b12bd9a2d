package node

import (
	"fmt"
	"slices"
	"sync"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shuffler"
)

// roundDummies supplies the Service's dummy reports for the open round:
// those precomputed while the round ran, or fresh ones (one
// shuffler.DummyReports per key id, sealed to the round's key with noise
// from crypto/rand).
type roundDummies struct {
	run protocol.RunConfig
	// bindRun is the run id reports are sealed to (run's own: in a
	// sharded run the shard's id, shard.RunID).
	bindRun string
	keys    map[uint8]protocol.KeyConfig
	mu      sync.Mutex
	makers  map[uint8]*shuffler.DummyReports
	round   int64
	keyID   uint8
	pre     [][]byte
	issued  [][protocol.ReportIDSize]byte // ids of the dummies handed out for round
	// got marks the slots whose client delivered: their precomputed dummy
	// is dropped (made anyway, so the work per round is constant; dropped
	// so the round holds about k reports, not 2k).
	got []bool
}

// delivered records that the client of slot delivered in round id.
func (d *roundDummies) delivered(id int64, slot int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id != d.round || slot < 0 || slot >= len(d.got) {
		return
	}
	d.got[slot] = true
	if slot < len(d.pre) {
		d.pre[slot] = nil
	}
}

// issuedIDs returns the report ids of the dummies handed out for the
// current round.
func (d *roundDummies) issuedIDs() [][protocol.ReportIDSize]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.issued)
}

// newRoundDummies returns the dummy source of run; it builds the maker of
// one published key now, so that a run whose randomizer cannot make
// dummies is refused before its first round.
func newRoundDummies(run protocol.RunConfig, bindRun string, keys map[uint8]protocol.KeyConfig) (*roundDummies, error) {
	d := &roundDummies{run: run, bindRun: bindRun, keys: keys, makers: map[uint8]*shuffler.DummyReports{}}
	for id := range keys {
		if _, err := d.maker(id); err != nil {
			return nil, err
		}
		break
	}
	return d, nil
}

func (d *roundDummies) maker(id uint8) (*shuffler.DummyReports, error) {
	if m := d.makers[id]; m != nil {
		return m, nil
	}
	kc, ok := d.keys[id]
	if !ok {
		return nil, fmt.Errorf("dummy reports: key id %d is not published by the server", id)
	}
	sealer, err := protocol.NewHPKESealer(kc, d.run.ReportBytes-protocol.HPKEOverhead)
	if err != nil {
		return nil, fmt.Errorf("dummy reports: %w", err)
	}
	m, err := shuffler.NewDummyReports(d.run, sealer, nil)
	if err != nil {
		return nil, err
	}
	d.makers[id] = m
	return m, nil
}

// set starts round r of slots sampled clients, whose reports are sealed
// to key id.
func (d *roundDummies) set(r protocol.Round, id uint8, slots int) {
	d.mu.Lock()
	d.round, d.keyID, d.pre, d.issued = r.ID, id, nil, nil
	d.got = make([]bool, slots)
	d.mu.Unlock()
}

// precompute makes count dummies for round r (constant work per round).
func (d *roundDummies) precompute(r protocol.Round, count int) {
	r.Model.Run = d.bindRun
	d.mu.Lock()
	m, err := d.maker(d.keyID)
	d.mu.Unlock()
	if err != nil {
		return // Dummy reports the error at release
	}
	pre, err := m.Precompute(r, count)
	if err != nil {
		return
	}
	d.mu.Lock()
	if d.round == r.ID {
		for slot, got := range d.got {
			if got && slot < len(pre) {
				pre[slot] = nil
			}
		}
		d.pre = pre
	}
	d.mu.Unlock()
}

// Dummy implements shuffler.Dummies.
func (d *roundDummies) Dummy(r protocol.Round, slot int) ([]byte, error) {
	r.Model.Run = d.bindRun
	d.mu.Lock()
	defer d.mu.Unlock()
	var rep []byte
	if r.ID == d.round && slot < len(d.pre) && d.pre[slot] != nil {
		rep, d.pre[slot] = d.pre[slot], nil
	} else {
		m, err := d.maker(d.keyID)
		if err != nil {
			return nil, err
		}
		if rep, err = m.Make(r); err != nil {
			return nil, err
		}
	}
	id, err := protocol.ReportID(rep)
	if err != nil {
		return nil, err
	}
	d.issued = append(d.issued, id)
	return rep, nil
}
