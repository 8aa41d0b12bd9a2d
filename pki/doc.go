// Package pki is the small public-key infrastructure of a networked
// shuffledp deployment: a local certificate authority, TLS certificates
// for the server and the shuffler (with subject alternative names for the
// addresses they listen on), the TLS configurations of every connection,
// and the clients' credentials.
//
// Layout of a PKI directory (private keys 0600):
//
//	ca.pem, ca.key               the authority (ECDSA P-256, self-signed)
//	server.pem, server.key       the server's certificate (server auth)
//	shuffler.pem, shuffler.key   the shuffler's certificate (server and
//	                             client auth: it dials the server, which
//	                             accepts batches only from it)
//	clients.key                  the 32-byte secret client credentials are
//	                             derived from (the shuffler's, see Enroller)
//
// `shuffledp up` creates one under its state directory; a deployment on
// several machines creates it with `shuffledp pki init` and copies ca.pem
// to every host, the server's pair to the server's host, the shuffler's pair
// and clients.key to the shuffler's host, and each client's credential
// file (`shuffledp pki enrol`) to its host.
package pki
