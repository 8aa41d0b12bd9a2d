package ledger

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
)

// NeighbouringClient is Report.Neighbouring of a run whose clients hold
// several examples or take several local steps (train and up's
// --examples-per-client, --local-steps): its epsilon is for one client's
// whole data. The events do not change (one clipped update a client,
// whatever it is made of), so only the run's recorded flags tell.
const NeighbouringClient = "one client's whole data (replace-one at the client level: all its examples and its whole local update), not one example"

// manifestFile is the name of a state directory's manifest (package
// statedir's ManifestFile, which this package sits below): the run id and
// its flags, {"flags": {"name": "value"}}.
const manifestFile = "run.json"

// neighbouringOf returns NeighbouringClient when the run kept in the state
// directory dir recorded --examples-per-client or --local-steps above 1
// (in dir's manifest, a train run's, or in dir/server's, the server of an
// up run), and "" otherwise (or when neither manifest can be read: a
// ledger given by --ledger, a shuffler's own directory).
func neighbouringOf(dir string) string {
	for _, p := range []string{filepath.Join(dir, manifestFile), filepath.Join(dir, "server", manifestFile)} {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var m struct {
			Flags map[string]string `json:"flags"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		for _, f := range []string{"examples-per-client", "local-steps"} {
			if n, err := strconv.Atoi(m.Flags[f]); err == nil && n > 1 {
				return NeighbouringClient
			}
		}
	}
	return ""
}
