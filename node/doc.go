// Package node is the network transport of the shuffle model's three
// roles: a Server, a Shuffler and a ClientPool, talking gRPC (package
// proto/shuffledp/v1) over TLS (package pki). The round itself is not
// reimplemented here: the Server is the transport of the server process's
// training loop (package training's Trainer, built WithRemote over it: the
// loop asks Server.Next for each round's batch, which the shuffler delivers
// with SubmitBatch), the shuffler node drives a shuffler.Service with a
// shuffler.LedgerBudget, and the client pool computes reports with
// client.Client — the same code the in-process simulation (package
// training) wires in memory. This package does not import training.
//
// Who dials whom (as in Flower's fleet API, nodes dial out):
//
//	client pool ──Work (stream of rounds)──▶ shuffler ──GetModel (long poll)──▶ server
//	            ──Submit (stream of sealed reports)─▶   ──SubmitBatch / Stop──▶
//	            ──GetRun (run config, HPKE key configs)────────────────────────▶
//
// Trust boundaries on the wire:
//
//   - Every peer proves its role inside the TLS handshake (package pki: a
//     certificate naming spiffe://DEPLOYMENT/ROLE): the server accepts the
//     shuffler and clients, the shuffler clients only, and each dialler
//     only the role it dials. Each RPC is then checked against rpcRoles
//     when its headers arrive, before its message is read: GetModel,
//     SubmitBatch and Stop are the shuffler's, GetRun the shuffler's and
//     the clients'; the model reaches the clients relayed by the shuffler,
//     so the server never learns who fetched it or who was sampled.
//   - Clients authenticate to the shuffler with a per-client bearer token
//     (pki.Enroller): one in each Work and Submit call's metadata (checked
//     before the call's message is read), then on every client a Work
//     request registers and on every report; a token is valid for its own
//     client id only.
//   - A client seals to a key config it fetched from the server itself, at
//     start (over a connection that accepts only the server's identity),
//     never to one the shuffler supplies: the shuffler relays only the key
//     id of the round, so it cannot substitute its own key and read
//     reports; a round naming a key the client was not given is refused,
//     not asked about (only sampled pools would ask).
//   - Nothing unauthenticated costs memory (guard.go): message limits sized
//     from the run, bounded streams and connections, deadlines on the
//     handshake and on a stream's messages.
//   - A batch is run, round and the concatenated equal-length sealed
//     reports in a fresh uniform order: no identity, timestamp or arrival
//     order. The shuffler debits the durable ledger before it forwards; it
//     never holds a private key.
//
// A node is started in process (tests) with New* and Serve/Run, or as an
// OS process by the shuffledp commands server, shuffler and client (and
// all three by `shuffledp up`, package cluster).
package node
