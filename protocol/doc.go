// Package protocol defines the messages of one CLDP-SGD round (Girgis et al.,
// NeurIPS 2021, Algorithm 1) that every transport carries between the three
// roles of the shuffle model: clients, the shuffler and the server
// (packages client, shuffler and server). It holds data and the sealing
// interface, no behaviour of a role.
//
// One round, as data:
//
//	server   --Model-->  shuffler               (parameters and version; no client list)
//	shuffler --Round-->  each sampled client    (round id + the server's Model, relayed)
//	client   --sealed report bytes--> shuffler  (sealed to the server for (run, round))
//	shuffler --Batch-->  server                 (report bytes only, permuted, after the debit)
//
// Trust boundaries the types keep: a Model does not depend on which clients
// are sampled and carries no client identity; a Batch carries the run, the
// round id and report byte strings only — no client identity, no timestamp,
// no arrival order; the shuffler handles sealed bytes and never opens them.
//
// # Sealing
//
// A deployment seals every report with HPKESealer to a numbered KeyConfig
// the server publishes (HPKE, RFC 9180: X25519, HKDF-SHA256, AES-128-GCM
// by default, through crypto/hpke), and the server opens it with an
// HPKEOpener holding the private keys (ReceiverKey) still in use. Reports
// are padded to the run's report size, so every envelope of a run has
// report size + HPKEOverhead bytes; an envelope opens only for the run,
// round and key it was sealed for. Its clear header (ParseHeader,
// ReportID) carries the key ID and a random 16-byte report ID, which the
// shuffler may read to refuse unknown keys and replays without reading the
// report. Plaintext is the identity sealing of the in-process simulation.
package protocol
