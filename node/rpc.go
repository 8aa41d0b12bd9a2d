package node

import (
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/protobuf/proto"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// dial opens a client connection to addr over TLS that completes a
// handshake only with a peer of role (pki.RequirePeer: the deployment's
// authority, the role, the host dialled). Replies are bounded by specLimit
// unless a call raises it (the model, sized from the run). The connection
// is lazy: calls with grpc.WaitForReady wait for the peer to come up.
func dial(addr string, tc *tls.Config, role string) (*grpc.ClientConn, error) {
	return dialWith(addr, tc, role, dialKeepalive)
}

// dialWith is dial with the keepalive parameters given (tests shorten them).
func dialWith(addr string, tc *tls.Config, role string, ka keepalive.ClientParameters) (*grpc.ClientConn, error) {
	if tc == nil {
		return nil, fmt.Errorf("dial %s: a TLS configuration is required", addr)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	rc, err := pki.RequirePeer(tc, role, host)
	if err != nil {
		return nil, fmt.Errorf("dial the %s at %s: %w", role, addr, err)
	}
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(rc)),
		// A peer that comes back is reconnected within a second (gRPC's
		// default backoff grows to two minutes, longer than the roles'
		// connect timeouts).
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6,
			Jitter: 0.2, MaxDelay: time.Second}, MinConnectTimeout: 5 * time.Second}),
		grpc.WithKeepaliveParams(ka),
		grpc.WithMaxHeaderListSize(dialHeaderList),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(specLimit), grpc.MaxCallSendMsgSize(sendLimit)))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return c, nil
}

// dialKeepalive makes the dialling side of every connection (a client to
// its shuffler, the shuffler to the server) ping its peer after 30 s
// without traffic and give the connection up 20 s after an unanswered
// ping, so a wait on a peer whose host vanished without closing its
// connections (power loss, a cut link) ends within about 50 s with an
// error naming the peer, instead of after the kernel's TCP timeouts
// (minutes to hours). The servers' enforcement policy (serverOptions)
// permits pings every 10 s, also without a stream.
var dialKeepalive = keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 20 * time.Second, PermitWithoutStream: true}

// runConfigToPB and runConfigFromPB convert the run's public configuration.
func runConfigToPB(c protocol.RunConfig) *pb.RunConfig {
	return &pb.RunConfig{Run: c.Run, Model: c.Model, Dim: int64(c.Dim), Randomizer: c.Randomizer, ClipNorm: c.ClipNorm,
		Clip: c.Clip, ClampLinf: c.ClampLinf, Eps0: c.Eps0, Population: int64(c.Population), PerRound: int64(c.PerRound),
		MinBatch: int64(c.MinBatch), ReportBytes: int64(c.ReportBytes), Sigma: c.Sigma, Participation: c.Participation, Rate: c.Rate,
		Adjacency: c.Adjacency, LocalSteps: int64(c.LocalSteps), LocalLr: c.LocalLR}
}

func runConfigFromPB(p *pb.RunConfig) (protocol.RunConfig, error) {
	if p == nil {
		return protocol.RunConfig{}, fmt.Errorf("run spec without a run config")
	}
	for _, v := range []int64{p.Dim, p.Population, p.PerRound, p.MinBatch, p.ReportBytes, p.LocalSteps} {
		if v < 0 || v > math.MaxInt32 {
			return protocol.RunConfig{}, fmt.Errorf("run config: count %d out of range", v)
		}
	}
	c := protocol.RunConfig{Run: p.Run, Model: p.Model, Dim: int(p.Dim), Randomizer: p.Randomizer, ClipNorm: p.ClipNorm,
		Clip: p.Clip, ClampLinf: p.ClampLinf, Eps0: p.Eps0, Population: int(p.Population), PerRound: int(p.PerRound),
		MinBatch: int(p.MinBatch), ReportBytes: int(p.ReportBytes), Sigma: p.Sigma, Participation: p.Participation, Rate: p.Rate,
		Adjacency: p.Adjacency, LocalSteps: int(p.LocalSteps), LocalLR: p.LocalLr}
	if err := c.Validate(); err != nil {
		return protocol.RunConfig{}, fmt.Errorf("run config: %w", err)
	}
	if c.Randomizer == protocol.RandomizerNone {
		return protocol.RunConfig{}, fmt.Errorf("run config: randomizer none has no reports to shuffle")
	}
	if c.Participation == protocol.ParticipationCheckIn && c.Randomizer != protocol.RandomizerGaussian {
		return protocol.RunConfig{}, fmt.Errorf("run config: participation checkin needs randomizer gaussian (the accountant's checkin-gaussian curve), got %s", c.Randomizer)
	}
	if err := checkAdjacency(c); err != nil {
		return protocol.RunConfig{}, fmt.Errorf("run config: %w", err)
	}
	return c, nil
}

// checkAdjacency requires a Gaussian run configuration to name its
// adjacency explicitly (a server that names none is older than this node:
// the event it would have the shuffler debit has no stated relation) and
// the event the shuffler debits for it to be valid; the other randomizers
// carry none.
func checkAdjacency(c protocol.RunConfig) error {
	if c.Randomizer != protocol.RandomizerGaussian {
		if c.Adjacency != "" {
			return fmt.Errorf("adjacency %s applies to randomizer gaussian only (eps0-LDP reports are replace-one natively), got randomizer %s", c.Adjacency, c.Randomizer)
		}
		return nil
	}
	if c.Adjacency == "" {
		return fmt.Errorf("adjacency must be set for randomizer gaussian (%s or %s); the server is older than this node", event.AdjacencyReplaceOne, event.AdjacencyZeroOut)
	}
	_, err := event.RoundEvent(c.Round(max(c.PerRound, 1)))
	return err
}

// sameRunConfig reports the first field in which the run configuration the
// shuffler debits for (shuf) differs from the one the server published to
// the client (srv), or "" if they are equal.
func sameRunConfig(srv, shuf *pb.RunConfig) string {
	if shuf == nil {
		return "config (the shuffler relayed none)"
	}
	if proto.Equal(srv, shuf) {
		return ""
	}
	a, b := srv.ProtoReflect(), shuf.ProtoReflect()
	fields := a.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if !a.Get(f).Equal(b.Get(f)) {
			return fmt.Sprintf("%s (server %v, shuffler %v)", f.Name(), a.Get(f), b.Get(f))
		}
	}
	return "config"
}

// keyConfigs decodes the spec's key configs by id.
func keyConfigs(spec *pb.RunSpec) (map[uint8]protocol.KeyConfig, error) {
	keys := make(map[uint8]protocol.KeyConfig, len(spec.GetKeyConfigs()))
	for _, b := range spec.GetKeyConfigs() {
		var k protocol.KeyConfig
		if err := k.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("run spec: %w", err)
		}
		if _, dup := keys[k.ID]; dup {
			return nil, fmt.Errorf("run spec: key id %d twice", k.ID)
		}
		keys[k.ID] = k
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("run spec: no key config")
	}
	return keys, nil
}
