package dashboard

import (
	"strconv"

	"github.com/shuffledp/shuffledp/protocol"
)

// RunFields lists the public configuration of a run (what the server
// publishes to the shuffler and the clients) as the page's fields.
func RunFields(run protocol.RunConfig) []Field {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	f := []Field{{"run", run.Run}, {"model", run.Model + " (d = " + strconv.Itoa(run.Dim) + ")"}, {"randomizer", run.Randomizer}}
	if run.Randomizer == protocol.RandomizerGaussian {
		f = append(f, Field{"sigma", g(run.Sigma)})
		if run.Adjacency != "" {
			f = append(f, Field{"adjacency", run.Adjacency})
		}
	} else if run.Randomizer != "" && run.Randomizer != protocol.RandomizerNone {
		f = append(f, Field{"eps0", g(run.Eps0)})
	}
	clip := run.ClipNorm + " " + g(run.Clip)
	if run.ClampLinf {
		clip += " (clamp)"
	}
	f = append(f, Field{"clip", clip}, Field{"clients (n)", strconv.Itoa(run.Population)})
	if run.Participation == protocol.ParticipationCheckIn {
		f = append(f, Field{"participation", "check-in, rate " + g(run.Rate)})
	} else {
		f = append(f, Field{"sample (k)", strconv.Itoa(run.PerRound)})
	}
	if run.LocalSteps > 1 {
		f = append(f, Field{"local steps", strconv.Itoa(run.LocalSteps) + " (local lr " + g(run.LocalLR) + ")"}, Field{NeighbouringField, NeighbouringClient})
	}
	return f
}

// NeighbouringField names the field saying what epsilon protects, where
// clients hold several examples or take several local steps:
// NeighbouringClient.
const NeighbouringField = "neighbouring"

// NeighbouringClient is the value of NeighbouringField.
const NeighbouringClient = "one client's whole data (replace-one at the client level), not one example"
