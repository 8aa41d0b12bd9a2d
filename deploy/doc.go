// Package deploy assembles the processes of a networked run from their
// parts, as `shuffledp server` and `shuffledp shuffler` run them: the
// server process (its state directory, the node.Server that is its
// transport, and the training loop over it, restored from the checkpoint)
// and the shuffler process (its credentials, state directory and ledger,
// and the node.Shuffler), with their Prometheus endpoints. The commands
// only turn flags into these configurations and print.
//
// It sits above training and node: node carries the roles over gRPC
// without the loop, training runs the loop over any transport, and this
// package joins the two for the server.
package deploy
