// Command libshuffledp is the accountant as a C shared library, built with
//
//	go build -buildmode=c-shared -o libshuffledp.so ./cmd/libshuffledp
//
// for the Python package (python/, loaded with ctypes). It exports C
// functions (export.go, which needs cgo):
//
//	char *shuffledp_call(const char *method, const char *request);
//	void shuffledp_free(char *response);
//
// shuffledp_call is account.Call: a JSON request in, a JSON response out
// ({"result": ...} or {"error": "message"}, the message Go's own), and
// method ledger.show (`ledger show --json`); the caller frees the response
// with shuffledp_free. Nothing is computed here.
//
// A third function (federated.go, run.go) runs a role of the federated
// Python API (package federated) with the caller's model arithmetic:
//
//	char *shuffledp_run(const char *role, const char *request,
//	    const double *theta0, long long n, shuffledp_client_fn client,
//	    shuffledp_server_fn server, shuffledp_eval_fn eval, void *ctx);
//
// role is server, shuffler, client or up; request {"args": [flags],
// "launch": [command], "env": [...]}; the function pointers (NULL where not
// used) are called from Go through C trampolines.
package main

// main is required of package main; a shared library's is never run.
func main() {}
