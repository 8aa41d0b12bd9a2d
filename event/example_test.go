package event_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/event"
)

// The privacy event of a round of shuffled check-in with Gaussian reports
// (ICLR'23 submission, Fig. 1b: n = 60,000, rate 0.1): the event does not
// depend on how many clients checked in, its curve covers the batch
// size's distribution.
func ExampleRoundEvent() {
	e, err := event.RoundEvent(event.Round{Randomizer: event.RandomizerGaussian, Participation: event.ParticipationCheckIn,
		N: 60000, Reports: 6021, Sigma: 2, Rate: 0.1, Adjacency: event.AdjacencyReplaceOne})
	if err != nil {
		panic(err)
	}
	fmt.Println(e)
	_, err = event.RoundEvent(event.Round{Randomizer: "rinf", Participation: event.ParticipationCheckIn, N: 60000, Eps0: 2, Rate: 0.1})
	fmt.Println(err)
	// Output:
	// checkin-gaussian(n=60000, rate=0.1, sigma=2, adjacency=replace-one)
	// --participation checkin needs --randomizer gaussian (the accountant has the check-in curve of the Gaussian mechanism only), got rinf
}
