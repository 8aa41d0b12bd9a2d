package server

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

type constLR float64

func (c constLR) Rate(float64) float64 { return float64(c) }

// stepLR is 1 in epoch 0 and 0.5 afterwards.
type stepLR struct{}

func (stepLR) Rate(e float64) float64 {
	if e < 1 {
		return 1
	}
	return 0.5
}

// recordingOpener records the bindings it opens for.
type recordingOpener struct{ got []protocol.Binding }

func (o *recordingOpener) Open(b protocol.Binding, s []byte) ([]byte, error) {
	o.got = append(o.got, b)
	return s, nil
}

func newServer(t *testing.T, rand string, opener protocol.Opener, receipts ReceiptLog, lr Schedule, project float64) (*Server, *model.LogReg, randomizer.Randomizer) {
	t.Helper()
	m, err := model.NewLogReg(3, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := protocol.RunConfig{Run: "run", Model: "logreg", Dim: m.NumParams(), Randomizer: rand, ClipNorm: protocol.NormLInf,
		Clip: 0.5, Eps0: 2, Population: 20, PerRound: 5, MinBatch: 3}
	var r randomizer.Randomizer
	if rand != protocol.RandomizerNone {
		if r, err = protocol.NewRandomizer(cfg); err != nil {
			t.Fatal(err)
		}
		cfg.ReportBytes = r.ReportSize()
	}
	s, err := New(Config{Run: cfg, LR: lr, ProjectRadius: project, Opener: opener, Receipts: receipts}, m)
	if err != nil {
		t.Fatal(err)
	}
	return s, m, r
}

func reports(t testing.TB, r randomizer.Randomizer, n int, seed uint64) [][]byte {
	t.Helper()
	src := randomizer.NewSeededSource(seed)
	g := make([]float64, r.Dim())
	var out [][]byte
	for i := range n {
		for j := range g {
			g[j] = 0.5 * math.Sin(float64(i*7+j))
		}
		rep, err := r.Randomize(g, src)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rep)
	}
	return out
}

// TestReceive: a batch moves the parameters by -lr/m times the sum of the
// decoded reports, in the epoch's learning rate, after its receipt was
// recorded; the opener is asked for the batch's (run, round).
func TestReceive(t *testing.T) {
	op := &recordingOpener{}
	log := &MemoryReceipts{}
	s, m, r := newServer(t, "rinf", op, log, stepLR{}, 0)
	before := slices.Clone(m.Params())
	var steps []Step
	for i := range 5 { // 4 steps per epoch (n/k = 20/5)
		b := protocol.Batch{Run: "run", Round: int64(10 + 2*i), Reports: reports(t, r, 4, uint64(i))}
		want := slices.Clone(m.Params())
		sum := make([]float64, len(want))
		if err := randomizer.AddDecodedAll(r, b.Reports, 1, sum); err != nil {
			t.Fatal(err)
		}
		lr := 1.0
		if i >= 4 {
			lr = 0.5
		}
		for j := range want {
			want[j] -= lr / 4 * sum[j]
		}
		st, err := s.Receive(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, st)
		if !slices.Equal(m.Params(), want) || st.LR != lr || st.Step != int64(i+1) || st.Reports != 4 {
			t.Fatalf("step %d: %+v, parameters %v, want %v", i, st, m.Params(), want)
		}
		if rc := log.Receipts(); len(rc) != i+1 || rc[i].Round != b.Round || rc[i].Digest != b.Digest() || rc[i].Reports != 4 {
			t.Fatalf("receipts %+v", rc)
		}
		if op.got[len(op.got)-1] != b.Binding() || len(op.got) != 4*(i+1) {
			t.Fatalf("opened for %v, batch is %v", op.got[len(op.got)-1], b.Binding())
		}
	}
	if steps[3].Epoch != 0 || steps[4].Epoch != 1 || s.Steps() != 5 || slices.Equal(before, m.Params()) {
		t.Fatalf("steps %+v", steps)
	}
	pub := s.Model()
	if pub.Version != 5 || pub.Run != "run" || &pub.Params[0] != &m.Params()[0] {
		t.Fatalf("published %+v", pub)
	}
}

// TestReceiveRefuses: a refused batch changes nothing but the receipt log.
func TestReceiveRefuses(t *testing.T) {
	log := &MemoryReceipts{}
	s, m, r := newServer(t, "rinf", protocol.Plaintext{}, log, constLR(1), 0)
	good := reports(t, r, 4, 1)
	bad := slices.Clone(good)
	bad[2] = []byte{0xFF, 0xFF} // wrong wire-format version
	for _, tc := range []struct {
		name string
		b    protocol.Batch
		want string
	}{
		{"another run", protocol.Batch{Run: "other", Round: 1, Reports: good}, "run"},
		{"below the minimum batch", protocol.Batch{Run: "run", Round: 1, Reports: good[:2]}, "minimum"},
		{"no usable report", protocol.Batch{Run: "run", Round: 1, Reports: [][]byte{bad[2], bad[2], {1, 2, 3}}}, "no report of the batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(m.Params())
			n := len(log.Receipts())
			_, err := s.Receive(context.Background(), tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if !slices.Equal(before, m.Params()) || s.Steps() != 0 || len(log.Receipts()) != n+1 {
				t.Fatal("a refused batch changed the model or left no receipt")
			}
		})
	}
	if _, err := s.ApplySum(make([]float64, m.NumParams()), 5); err == nil {
		t.Error("a private server accepted a clear sum")
	}
}

// failingReceipts is a receipt log whose every Append fails.
type failingReceipts struct{}

func (failingReceipts) Append(Receipt) error { return errors.New("disk full") }

// TestReceiveNeedsTheReceipt: a batch whose receipt cannot be recorded,
// good or refused, takes no step, and the error names the receipt log.
func TestReceiveNeedsTheReceipt(t *testing.T) {
	s, m, r := newServer(t, "rinf", protocol.Plaintext{}, failingReceipts{}, constLR(1), 0)
	good := reports(t, r, 4, 1)
	for _, b := range []protocol.Batch{
		{Run: "run", Round: 1, Reports: good},
		{Run: "other", Round: 1, Reports: good},
		{Run: "run", Round: 1, Reports: good[:2]},
	} {
		before := slices.Clone(m.Params())
		_, err := s.Receive(context.Background(), b)
		if err == nil || !strings.Contains(err.Error(), "receipt log: disk full") {
			t.Fatalf("run %q, %d reports: error %v, want the receipt log's", b.Run, len(b.Reports), err)
		}
		if !slices.Equal(before, m.Params()) || s.Steps() != 0 {
			t.Fatal("a batch without a receipt changed the model")
		}
	}
}

func TestApplySumAndProjection(t *testing.T) {
	s, m, _ := newServer(t, protocol.RandomizerNone, nil, nil, constLR(2), 0.25)
	sum := make([]float64, m.NumParams())
	for i := range sum {
		sum[i] = float64(i + 1)
	}
	st, err := s.ApplySum(sum, 4)
	if err != nil {
		t.Fatal(err)
	}
	var norm float64
	for i, v := range m.Params() {
		norm += v * v
		if want := -0.5 * float64(i+1); !(v < 0) || math.Abs(v/want-m.Params()[0]/-0.5) > 1e-12 {
			t.Fatalf("parameter %d = %g, not along the step direction", i, v)
		}
	}
	if math.Abs(math.Sqrt(norm)-0.25) > 1e-12 || st.Step != 1 {
		t.Fatalf("norm after projection %g, want 0.25; step %+v", math.Sqrt(norm), st)
	}
	if _, err := s.Receive(context.Background(), protocol.Batch{Run: "run"}); err == nil {
		t.Error("a non-private server accepted a batch")
	}
	if _, err := s.ApplySum(sum[:2], 4); err == nil {
		t.Error("a sum of the wrong length was accepted")
	}
}

// TestServerCannotExpressClientIdentities walks every exported method of
// Server and every type reachable from its parameters and results: none
// carries a list of integers (a sample), a map, a channel, a function or a
// time, and no field is named for a client, sample, sender or time. The
// batch the server receives has exactly the fields run, round and reports.
func TestServerCannotExpressClientIdentities(t *testing.T) {
	forbidden := []string{"client", "sample", "sender", "identity", "slot", "time", "arrival"}
	var walk func(path string, tp reflect.Type, seen map[reflect.Type]bool)
	walk = func(path string, tp reflect.Type, seen map[reflect.Type]bool) {
		if seen[tp] {
			return
		}
		seen[tp] = true
		if tp.PkgPath() == "time" {
			t.Errorf("%s: a time (%s)", path, tp)
		}
		switch tp.Kind() {
		case reflect.Slice, reflect.Array:
			el := tp.Elem()
			switch el.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				t.Errorf("%s: a list of integers (%s) could name clients", path, tp)
			}
			walk(path+"[]", el, seen)
		case reflect.Map, reflect.Chan, reflect.Func:
			t.Errorf("%s: a %s", path, tp.Kind())
		case reflect.Pointer:
			walk(path, tp.Elem(), seen)
		case reflect.Struct:
			for i := range tp.NumField() {
				f := tp.Field(i)
				for _, w := range forbidden {
					if strings.Contains(strings.ToLower(f.Name), w) {
						t.Errorf("%s.%s: field named for %q", path, f.Name, w)
					}
				}
				if f.IsExported() {
					walk(path+"."+f.Name, f.Type, seen)
				}
			}
		case reflect.Interface:
			// context.Context and error: behaviour only, no data.
			if tp != reflect.TypeFor[context.Context]() && tp != reflect.TypeFor[error]() {
				t.Errorf("%s: interface %s", path, tp)
			}
		}
	}
	st := reflect.TypeFor[*Server]()
	if st.NumMethod() == 0 {
		t.Fatal("no methods")
	}
	for i := range st.NumMethod() {
		m := st.Method(i)
		for _, w := range forbidden {
			if strings.Contains(strings.ToLower(m.Name), w) {
				t.Errorf("method %s named for %q", m.Name, w)
			}
		}
		for j := 1; j < m.Type.NumIn(); j++ {
			walk(m.Name+" in", m.Type.In(j), map[reflect.Type]bool{})
		}
		for j := range m.Type.NumOut() {
			walk(m.Name+" out", m.Type.Out(j), map[reflect.Type]bool{})
		}
	}
	bt := reflect.TypeFor[protocol.Batch]()
	var fields []string
	for i := range bt.NumField() {
		fields = append(fields, bt.Field(i).Name+" "+bt.Field(i).Type.String())
	}
	// ModelVersion is the server's own published version (public), not a
	// client's.
	if want := []string{"Run string", "Round int64", "ModelVersion int64", "Reports [][]uint8"}; !slices.Equal(fields, want) {
		t.Errorf("protocol.Batch has fields %v, want exactly %v", fields, want)
	}
}

func TestFileReceipts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l, err := OpenFileReceipts(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Receipt{{Run: "a", Round: 1, Reports: 10, Digest: [32]byte{1, 2}}, {Run: "a", Round: 3, Reports: 9, Digest: [32]byte{31: 7}}}
	for _, r := range want {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"run":"a","round":4,"rep`) // torn by a kill
	f.Close()
	got, err := ReadFileReceipts(path)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("read %+v, %v; want %+v", got, err, want)
	}
	os.WriteFile(path, []byte("{\"run\":\"a\"}\nnot json\n"), 0o644)
	if _, err := ReadFileReceipts(path); err == nil {
		t.Error("malformed line accepted")
	}
}

// failingOpener refuses the reports whose first byte is 0xEE (a report
// sealed to another key, say).
type failingOpener struct{}

func (failingOpener) Open(_ protocol.Binding, s []byte) ([]byte, error) {
	if s[0] == 0xEE {
		return nil, protocol.ErrOpen
	}
	return s, nil
}

// TestReceiveLeavesOutBadReports: a report of the wrong length, one that
// does not open and one that opens but does not decode are left out and
// counted; the step is the one the good reports alone give (divided by
// their number), so one misbehaving client cannot stop the run.
func TestReceiveLeavesOutBadReports(t *testing.T) {
	s, m, r := newServer(t, "rinf", failingOpener{}, &MemoryReceipts{}, constLR(1), 0)
	good := reports(t, r, 4, 7)
	unopenable := slices.Clone(good[0])
	unopenable[0] = 0xEE
	undecodable := slices.Clone(good[0])
	undecodable[0] = 0xFF // wrong wire-format version
	batch := [][]byte{good[0], {1, 2, 3}, good[1], unopenable, good[2], undecodable, good[3]}
	want := slices.Clone(m.Params())
	sum := make([]float64, len(want))
	if err := randomizer.AddDecodedAll(r, good, 1, sum); err != nil {
		t.Fatal(err)
	}
	for j := range want {
		want[j] -= sum[j] / 4
	}
	st, err := s.Receive(context.Background(), protocol.Batch{Run: "run", Round: 1, Reports: batch})
	if err != nil {
		t.Fatal(err)
	}
	if st.Reports != 4 || st.Refused != 3 || st.Step != 1 {
		t.Fatalf("step %+v, want 4 reports averaged and 3 refused", st)
	}
	for j := range want {
		if math.Abs(m.Params()[j]-want[j]) > 1e-12 {
			t.Fatalf("parameter %d: %v, want %v (the good reports' step)", j, m.Params()[j], want[j])
		}
	}
}

// TestReceiveOpenWorkers: opening a batch on several goroutines
// (Config.OpenWorkers) gives the serial step bit for bit (the reports are
// summed in the batch's order) and counts the same refusals, with bad
// reports scattered across the workers' chunks, and a scratch reused over
// rounds of different sizes.
func TestReceiveOpenWorkers(t *testing.T) {
	build := func(workers int) (*Server, *model.LogReg, randomizer.Randomizer) {
		m, err := model.NewLogReg(3, 2)
		if err != nil {
			t.Fatal(err)
		}
		cfg := protocol.RunConfig{Run: "run", Model: "logreg", Dim: m.NumParams(), Randomizer: "rinf", ClipNorm: protocol.NormLInf,
			Clip: 0.5, Eps0: 2, Population: 4000, PerRound: 1000, MinBatch: 1}
		r, err := protocol.NewRandomizer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ReportBytes = r.ReportSize()
		s, err := New(Config{Run: cfg, LR: constLR(0.1), Opener: failingOpener{}, OpenWorkers: workers}, m)
		if err != nil {
			t.Fatal(err)
		}
		return s, m, r
	}
	serial, ms, r := build(1)
	var batches [][][]byte
	for round, n := range []int{1000, 300, 1, 777} {
		b := reports(t, r, n, uint64(round+1))
		for i := range b {
			switch i % 97 {
			case 5:
				b[i] = slices.Clone(b[i])
				b[i][0] = 0xEE // does not open
			case 50:
				b[i] = b[i][:1] // wrong length
			case 70:
				b[i] = slices.Clone(b[i])
				b[i][0] = 0xFF // does not decode
			}
		}
		batches = append(batches, b)
	}
	var want []Step
	for i, b := range batches {
		st, err := serial.Receive(context.Background(), protocol.Batch{Run: "run", Round: int64(i + 1), Reports: b})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, st)
	}
	if want[0].Refused == 0 || want[0].Reports == 0 {
		t.Fatalf("serial step %+v: the batch should have refused and used reports", want[0])
	}
	for _, workers := range []int{2, 3, 16} {
		par, mp, _ := build(workers)
		for i, b := range batches {
			st, err := par.Receive(context.Background(), protocol.Batch{Run: "run", Round: int64(i + 1), Reports: b})
			if err != nil {
				t.Fatal(err)
			}
			if st != want[i] {
				t.Fatalf("workers %d, round %d: step %+v, serial %+v", workers, i+1, st, want[i])
			}
		}
		if !slices.Equal(mp.Params(), ms.Params()) {
			t.Fatalf("workers %d: parameters %v, serial %v (not bit-identical)", workers, mp.Params(), ms.Params())
		}
	}
}
