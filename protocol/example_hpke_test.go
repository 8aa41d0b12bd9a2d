package protocol_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// A client seals an eps0-LDP report to the server's published key config
// for (run, round); the shuffler reads only the clear header (key ID and
// report ID, to refuse unknown keys and replays); the server opens it for
// the same (run, round) and for no other.
func ExampleHPKESealer() {
	// Server: a numbered key pair; it publishes key.Config and keeps the
	// private key (ReceiverKey.MarshalBinary for its state directory).
	key, err := protocol.GenerateKey(1)
	if err != nil {
		log.Fatal(err)
	}
	r, err := randomizer.New("rinf", randomizer.Config{Eps0: 2, Dim: 13000, Radius: 1})
	if err != nil {
		log.Fatal(err)
	}
	size := r.ReportSize() // the run's report size: every envelope is size + HPKEOverhead bytes

	// Client: randomize (crypto/rand in deployment) and seal for the round.
	sealer, err := protocol.NewHPKESealer(key.Config, size)
	if err != nil {
		log.Fatal(err)
	}
	grad := make([]float64, 13000)
	grad[0] = 0.5
	rep, err := r.Randomize(grad, randomizer.NewCryptoSource())
	if err != nil {
		log.Fatal(err)
	}
	round := protocol.Binding{Run: "mnist-1", Round: 12}
	sealed, err := sealer.Seal(round, rep)
	if err != nil {
		log.Fatal(err)
	}

	// Shuffler: the clear header only.
	h, err := protocol.ParseHeader(sealed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("report %d bytes, sealed %d bytes (run's report-bytes %d), key id %d\n",
		len(rep), len(sealed), size+sealer.Overhead(), h.KeyID)

	// Server: open for the round it received the batch for.
	opener, err := protocol.NewHPKEOpener(size, key)
	if err != nil {
		log.Fatal(err)
	}
	got, err := opener.Open(round, sealed)
	fmt.Println("opened for round 12:", err == nil && string(got) == string(rep))
	_, err = opener.Open(protocol.Binding{Run: "mnist-1", Round: 13}, sealed)
	fmt.Println("refused for round 13:", errors.Is(err, protocol.ErrOpen))
	// Output:
	// report 3 bytes, sealed 70 bytes (run's report-bytes 70), key id 1
	// opened for round 12: true
	// refused for round 13: true
}
