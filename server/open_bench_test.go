package server

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
)

// BenchmarkReceiveHPKE: one op is Receive of a batch of 10,000 HPKE-sealed
// R_inf reports (NeurIPS'21 Fig. 3's k; the logistic model, so that the
// step costs nothing beside the opening), opened on one goroutine and on
// GOMAXPROCS (Config.OpenWorkers); wall and CPU time (getrusage, the
// whole process) per report. With -count the two alternate, so a loaded
// machine's drift falls on both:
//
//	go test ./server -run '^$' -bench ReceiveHPKE -benchtime 3x -count 5
func BenchmarkReceiveHPKE(b *testing.B) {
	const k = 10000
	m0, err := model.NewLogReg(784, 10)
	if err != nil {
		b.Fatal(err)
	}
	run := protocol.RunConfig{Run: "run", Model: "logreg", Dim: m0.NumParams(), Randomizer: "rinf", ClipNorm: protocol.NormLInf,
		Clip: 0.5, Eps0: 1.5, Population: 60000, PerRound: k, MinBatch: 1}
	r, err := protocol.NewRandomizer(run)
	if err != nil {
		b.Fatal(err)
	}
	key, err := protocol.GenerateKey(1)
	if err != nil {
		b.Fatal(err)
	}
	sealer, err := protocol.NewHPKESealer(key.Config, r.ReportSize())
	if err != nil {
		b.Fatal(err)
	}
	run.ReportBytes = r.ReportSize() + protocol.HPKEOverhead
	reps := reports(b, r, k, 1)
	batch := protocol.Batch{Run: "run", Round: 1, Reports: make([][]byte, k)}
	for i, rep := range reps {
		if batch.Reports[i], err = sealer.Seal(batch.Binding(), rep); err != nil {
			b.Fatal(err)
		}
	}
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			opener, err := protocol.NewHPKEOpener(r.ReportSize(), key)
			if err != nil {
				b.Fatal(err)
			}
			m, _ := model.NewLogReg(784, 10)
			s, err := New(Config{Run: run, LR: constLR(0.1), Opener: opener, OpenWorkers: workers}, m)
			if err != nil {
				b.Fatal(err)
			}
			c0 := processCPU()
			for b.Loop() {
				st, err := s.Receive(context.Background(), batch)
				if err != nil || st.Reports != k {
					b.Fatalf("%+v %v", st, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*k), "µs/report")
			b.ReportMetric(float64((processCPU()-c0).Microseconds())/float64(b.N*k), "CPU-µs/report")
		})
	}
}

// processCPU returns the process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
