package shuffler_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/shuffler"
)

// budget is an in-memory privacy budget of at most max releases.
type budget struct{ spent, max int }

func (b *budget) Debit(_ context.Context, r shuffler.Release) error {
	if b.spent+1 > b.max {
		return fmt.Errorf("budget exhausted after %d rounds", b.spent)
	}
	b.spent++
	return nil
}

// Two rounds of the shuffle model through the three roles: the server
// publishes its model, the shuffler samples k of n clients and relays it,
// each sampled client reports, the shuffler debits the budget, permutes
// and forwards report bytes only, and the server steps. The third round is
// refused by the budget: nothing reaches the server.
func ExampleService() {
	const n, k = 50, 20
	r := rand.New(rand.NewPCG(1, 2))
	examples := make([]client.Example, n) // client i holds examples[i]
	for i := range examples {
		examples[i] = client.Example{X: []float64{r.NormFloat64(), r.NormFloat64()}, Label: i % 2}
	}
	m, _ := model.NewLogReg(2, 2)
	run := protocol.RunConfig{Run: "example", Model: m.Name(), Dim: m.NumParams(), Randomizer: "rinf",
		ClipNorm: protocol.NormLInf, Clip: 0.5, Eps0: 2, Population: n, PerRound: k, MinBatch: k}
	rinf, _ := protocol.NewRandomizer(run)
	run.ReportBytes = rinf.ReportSize() // + the sealer's overhead (0 for Plaintext)

	srv, err := server.New(server.Config{Run: run, LR: constantLR(0.1), Opener: protocol.Plaintext{}}, m)
	if err != nil {
		panic(err)
	}
	// No Randomness given: samples and permutations from crypto/rand.
	svc, err := shuffler.NewService(shuffler.ServiceConfig{Run: run, Budget: &budget{max: 2}})
	if err != nil {
		panic(err)
	}
	own, _ := model.NewLogReg(2, 2)                      // the client's own model; each round's parameters are copied in
	c, err := client.New(run, own, protocol.Plaintext{}) // SIMULATION ONLY sealing
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	noise := randomizer.NewCryptoSource()
	for range 3 {
		round, err := svc.Open(ctx, srv.Model())
		if err != nil {
			panic(err)
		}
		for _, i := range svc.Sampled() { // the shuffler's transport relays the round
			sealed, _, err := c.Report(&round, examples[i], noise)
			if err != nil {
				panic(err)
			}
			if err := svc.Submit(i, round.ID, sealed); err != nil {
				panic(err)
			}
		}
		_, err = svc.Release(ctx, func(ctx context.Context, b protocol.Batch) error {
			st, err := srv.Receive(ctx, b)
			fmt.Printf("round %d: the server averaged %d reports, step %d\n", b.Round, st.Reports, st.Step)
			return err
		})
		if err != nil {
			fmt.Println("round", round.ID, "discarded:", err)
		}
	}
	// Output:
	// round 1: the server averaged 20 reports, step 1
	// round 2: the server averaged 20 reports, step 2
	// round 3 discarded: shuffler: round 3: budget not debited: batch discarded: budget exhausted after 2 rounds
}

type constantLR float64

func (c constantLR) Rate(float64) float64 { return float64(c) }
