// Package pki is the small public-key infrastructure of a networked
// shuffledp deployment: a certificate authority, one certificate per role
// bound to that role, the TLS configurations that check the peer's role
// inside the handshake, and the clients' credentials.
//
// Every certificate names its role as a URI subject alternative name, the
// SPIFFE ID spiffe://DEPLOYMENT/ROLE (server, shuffler or client), and the
// authority names the deployment (spiffe://DEPLOYMENT). A listener accepts
// only the roles that may call it (Callers: the server the shuffler and
// clients, the shuffler clients only) and a dialler only the role it dials
// (Callees, RequirePeer); a valid certificate of another role fails the
// handshake with an error naming the expected and the presented role.
//
// pki init runs on the operator's trusted machine and writes one bundle
// per host (InitWith):
//
//	DIR/operator/  ca.pem ca.key clients.key   never leaves the operator
//	DIR/server/    ca.pem server.pem server.key
//	DIR/shuffler/  ca.pem shuffler.pem shuffler.key clients.key
//	DIR/client/    ca.pem client.pem client.key
//
// Clients also hold their credentials (`pki enrol`): the bearer token of
// client i is HMAC-SHA256(clients.key, label || i) (Enroller). The client
// certificate, shared by all clients, proves "a client of this deployment";
// the token proves which one. pki rotate replaces one role's key and
// certificate (Rotate, crash-safe); pki revoke lists a certificate's serial
// in every bundle's revoked.txt (Revoke), and the handshake refuses a peer
// presenting a listed certificate. Secret files (keys, clients.key, credentials) with
// group or other permissions are refused when loaded (CheckPrivate).
package pki
