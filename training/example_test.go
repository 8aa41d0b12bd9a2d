package training_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/training"
)

// The learning-rate schedule the text of NeurIPS'21 supplement Fig. 6 (arXiv
// Fig. 5(b)) states: 12 for the first 30 epochs, 4 for the next 30, then 3.5.
func ExampleParseLRSchedule() {
	s, err := training.ParseLRSchedule("12,30:4,60:3.5")
	if err != nil {
		panic(err)
	}
	for _, epoch := range []int{0, 29, 30, 59, 60, 199} {
		fmt.Printf("epoch %3d: lr %g\n", epoch, s.Rate(epoch))
	}
	// Output:
	// epoch   0: lr 12
	// epoch  29: lr 12
	// epoch  30: lr 4
	// epoch  59: lr 4
	// epoch  60: lr 3.5
	// epoch 199: lr 3.5
}

// The setting of NeurIPS'21 Fig. 3 (arXiv Fig. 5(a)): n = 60,000 clients, k = 10,000 per
// round, so an epoch is 6 rounds and 200 epochs are 1,200 rounds; l_inf
// clipping is the default for R_inf.
func ExampleConfig() {
	lr, _ := training.ParseLRSchedule("0.3,70:0.18")
	cfg := training.Config{
		Clients: 60000, Sample: 10000, Randomizer: "rinf", Clip: 0.01, Eps0: 1.5,
		Delta: 1e-5, Epochs: 200, LR: lr, Seed: 1,
	}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	fmt.Println("clip norm:", cfg.ClipNorm)
	fmt.Println("rounds:", cfg.TotalRounds())
	fmt.Println("epoch of round 420:", cfg.EpochOf(420), "lr", cfg.LR.Rate(cfg.EpochOf(420)))

	cfg.Sample = 70000
	fmt.Println(cfg.Validate())
	// Output:
	// clip norm: linf
	// rounds: 1200
	// epoch of round 420: 70 lr 0.18
	// sample must be in [1, clients=60000], got 70000
}
