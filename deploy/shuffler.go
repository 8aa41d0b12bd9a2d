package deploy

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/pki"
)

// ShufflerTLS loads the shuffler's TLS configurations from its bundle
// pkiDir: listen, for the clients that dial it, and dial, for the server
// it dials; its own certificate must be valid now.
func ShufflerTLS(pkiDir string) (listen, dial *tls.Config, err error) {
	if listen, err = pki.ServerTLS(pkiDir, pki.RoleShuffler); err != nil {
		return nil, nil, err
	}
	if dial, err = pki.ClientTLS(pkiDir, pki.RoleShuffler, pki.RoleServer); err != nil {
		return nil, nil, err
	}
	return listen, dial, node.CheckOwnCertificates("shuffler", listen, time.Now())
}

// Shuffler is the shuffler process: its state directory with the ledger,
// and the node.
type Shuffler struct {
	State *node.ShufflerState
	Node  *node.Shuffler
}

// OpenShuffler locks the state directory stateDir and opens the ledger in
// it, or ledgerURL's (node.OpenShufflerState), loads the client-credential
// secret of the bundle pkiDir and builds the node of cfg over them (cfg's
// Store and Enroller are set here). On error everything opened is closed.
func OpenShuffler(ctx context.Context, stateDir, ledgerURL, pkiDir string, cfg node.ShufflerConfig) (*Shuffler, error) {
	st, err := node.OpenShufflerState(ctx, stateDir, ledgerURL)
	if err != nil {
		return nil, err
	}
	if cfg.Enroller, err = pki.LoadEnroller(pkiDir); err == nil {
		cfg.Store, cfg.History = st.Store, st
		var sh *node.Shuffler
		if sh, err = node.NewShuffler(cfg); err == nil {
			return &Shuffler{State: st, Node: sh}, nil
		}
	}
	return nil, errors.Join(err, st.Close())
}

// Close closes the state directory and its ledger.
func (s *Shuffler) Close() error { return s.State.Close() }
