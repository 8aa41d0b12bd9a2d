// Package federated is the Go half of the federated Python API
// (python/shuffledp/federated.py, docs/python-federated.md): a user keeps
// their own model in Python and shuffledp is the privacy layer. Each role
// runs as `shuffledp server`, `shuffler` or `client` does, from the same
// command-line flags, with the model's arithmetic injected as Go functions
// (which cmd/libshuffledp binds to Python callbacks through a C
// trampoline):
//
//   - RunClients: a client pool (node.ClientPool) whose update for each of
//     its sampled clients comes from an UpdateFunc given that client's index
//     and the round's published parameters, and goes through the run's
//     clip, randomizer and HPKE seal as a gradient does
//     (client.Client.ReportUpdate);
//   - RunServer: the server process (deploy.RunServer) over a model.External
//     whose theta_0 is the caller's, stepped by a server.Update given only
//     the round's released mean (never a report, never a client) and
//     evaluated by a training.Evaluator; ledger, target epsilon,
//     checkpoints, metrics and dashboard are the server process's own;
//   - RunShuffler: the shuffler process, unchanged (it never sees a model);
//   - Up: the three as separate processes on loopback (cluster.Up), each
//     started through a launcher command (the Python interpreter running
//     the role with the user's functions) instead of the shuffledp binary.
//
// Trust model: the same as the binary's. The client update function runs
// inside the client process and is called with one client's index only; the
// server update and evaluation functions run inside the server process and
// see the released mean and the parameters, which are post-processing of
// the shuffled, debited batch.
package federated
