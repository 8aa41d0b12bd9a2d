package node

import (
	"errors"
	"testing"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shard"
)

// shardBindingFixture is a sharded server of run "bind" (8 clients, 2
// shards: clients 0..3 and 4..7) with its HPKE key, and a sealer of its
// clients.
type shardBindingFixture struct {
	t      *testing.T
	s      *Server
	sealer *protocol.HPKESealer
	opener *protocol.HPKEOpener
	parts  []shard.Part
}

func newShardBindingFixture(t *testing.T) *shardBindingFixture {
	t.Helper()
	key, err := protocol.GenerateKey(serverKeyID)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := protocol.NewHPKESealer(key.Config, 8)
	if err != nil {
		t.Fatal(err)
	}
	opener, err := protocol.NewHPKEOpener(8, key)
	if err != nil {
		t.Fatal(err)
	}
	run := protocol.RunConfig{Run: "bind", Population: 8, PerRound: 4}
	plan, err := shard.Split(run.Run, 8, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{cfg: ServerConfig{Shards: 2}, run: run, plan: &plan}
	return &shardBindingFixture{t: t, s: s, sealer: sealer, opener: opener, parts: plan.Parts}
}

// seal seals a report of client for round id of its shard as the pool
// does: to the run id its shard's shuffler relays (the shard's own:
// shard.PartConfig), after checkBindRun; old seals it as clients did
// before the binding named the shard (the run's id).
func (f *shardBindingFixture) seal(client int64, id int64, old bool) []byte {
	f.t.Helper()
	part := f.parts[f.s.plan.Of(int(client))]
	relayed := shard.PartConfig(f.s.run, part).Run
	if old {
		relayed = f.s.run.Run
	}
	if err := checkBindRun(f.s.run, relayed, []int64{client}); err != nil {
		f.t.Fatal(err)
	}
	r := protocol.Round{ID: id, Model: protocol.Model{Run: relayed}}
	sealed, err := f.sealer.Seal(r.Binding(), []byte{byte(client)})
	if err != nil {
		f.t.Fatal(err)
	}
	return sealed
}

// open joins the shards' batches as nextSharded does and opens every
// report through the server's shardOpener; old binds each report to (the
// run's id, its shard batch's round), the server's binding before it named
// the shard. It returns the clients whose reports opened.
func (f *shardBindingFixture) open(bs []protocol.Batch, old bool) []byte {
	f.t.Helper()
	joined, bind := f.s.joinShards(bs)
	if old {
		bind = map[[protocol.ReportIDSize]byte]protocol.Binding{}
		for _, b := range bs {
			for _, rep := range b.Reports {
				h, err := protocol.ParseHeader(rep)
				if err != nil {
					f.t.Fatal(err)
				}
				bind[h.ReportID] = protocol.Binding{Run: f.s.run.Run, Round: b.Round}
			}
		}
	}
	f.s.bindings.Store(&bind)
	op := shardOpener{f.opener, f.s}
	var got []byte
	for _, rep := range joined.Reports {
		out, err := op.Open(joined.Binding(), rep)
		switch {
		case err == nil:
			got = append(got, out...)
		case !errors.Is(err, protocol.ErrOpen):
			f.t.Fatalf("open: %v, want ErrOpen or success", err)
		}
	}
	return got
}

// TestShardBindingRefusesCrossShardReplay: a report is sealed to its
// shard's run id (the model its shard's shuffler relays), so the server
// opens it only in its own shard's batch. A report of shard 0's round 5
// released through shard 1's batch of round 5 (each shard's round ids are
// its own, so the ids meet) does not open, and a copy in both shards'
// batches of a round opens in neither. The negative control binds as the
// code did before the binding named the shard, (the run's id, the round):
// there the replay opens, and the copy opens twice.
func TestShardBindingRefusesCrossShardReplay(t *testing.T) {
	for _, old := range []bool{false, true} {
		f := newShardBindingFixture(t)
		a0, a1, b4, b5 := f.seal(0, 5, old), f.seal(1, 6, old), f.seal(4, 5, old), f.seal(5, 5, old)
		run0, run1 := f.parts[0].Run, f.parts[1].Run

		// Honest: each shard's batch holds its own clients' reports.
		honest := f.open([]protocol.Batch{{Run: run0, Round: 5, Reports: [][]byte{a0}}, {Run: run1, Round: 5, Reports: [][]byte{b4}}}, old)
		if string(honest) != "\x00\x04" {
			t.Fatalf("old=%v: honest round opened clients %v, want [0 4]", old, honest)
		}
		// Shard 0's round-5 report of client 0 replayed through shard 1's
		// round 5, while shard 0 releases its round 6.
		replay := f.open([]protocol.Batch{{Run: run0, Round: 6, Reports: [][]byte{a1}}, {Run: run1, Round: 5, Reports: [][]byte{b5, a0}}}, old)
		// The same report released by both shards' batches of round 5.
		twice := f.open([]protocol.Batch{{Run: run0, Round: 5, Reports: [][]byte{a0}}, {Run: run1, Round: 5, Reports: [][]byte{b4, a0}}}, old)
		if !old {
			if string(replay) != "\x01\x05" {
				t.Errorf("the replay through another shard's batch: opened clients %v, want [1 5] (client 0's refused)", replay)
			}
			if string(twice) != "\x04" {
				t.Errorf("a report in two shards' batches: opened clients %v, want [4] (no copy of client 0's)", twice)
			}
			continue
		}
		// Negative control: before the binding named the shard, both open.
		if string(replay) != "\x01\x05\x00" {
			t.Errorf("negative control (run-only binding): the replay opened clients %v, want [1 5 0]", replay)
		}
		if string(twice) != "\x00\x04\x00" {
			t.Errorf("negative control (run-only binding): a report in two shards' batches opened clients %v, want [0 4 0]", twice)
		}
	}
}

// TestCheckBindRun: a client pool seals only to its run's id or to the id
// of the shard that holds every sampled client of the round.
func TestCheckBindRun(t *testing.T) {
	run := protocol.RunConfig{Run: "r", Population: 10}
	for _, c := range []struct {
		bind    string
		clients []int64
		ok      bool
	}{
		{"r", []int64{0, 9}, true},
		{shard.RunID("r", 0, 2), []int64{0, 4}, true},
		{shard.RunID("r", 1, 2), []int64{5, 9}, true},
		{shard.RunID("r", 1, 3), []int64{4, 6}, true}, // shard 1 of 3: clients 4..6
		{shard.RunID("r", 1, 3), []int64{3}, false},
		{shard.RunID("r", 1, 3), []int64{7}, false},
		{shard.RunID("r", 0, 2), []int64{5}, false},
		{shard.RunID("other", 0, 2), []int64{0}, false},
		{"other", []int64{0}, false},
		{"r#shard-2-of-2", []int64{0}, false},
		{shard.RunID("r", 0, 11), []int64{0}, false}, // more shards than clients
	} {
		if err := checkBindRun(run, c.bind, c.clients); (err == nil) != c.ok {
			t.Errorf("checkBindRun(%q, %v) = %v, want ok %v", c.bind, c.clients, err, c.ok)
		}
	}
}
