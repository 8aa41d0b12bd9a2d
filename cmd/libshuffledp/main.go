// Command libshuffledp is the accountant as a C shared library, built with
//
//	go build -buildmode=c-shared -o libshuffledp.so ./cmd/libshuffledp
//
// for the Python package (python/, loaded with ctypes). It exports two C
// functions (export.go, which needs cgo):
//
//	char *shuffledp_call(const char *method, const char *request);
//	void shuffledp_free(char *response);
//
// shuffledp_call is account.Call: a JSON request in, a JSON response out
// ({"result": ...} or {"error": "message"}, the message Go's own); the
// caller frees the response with shuffledp_free. Nothing is computed here.
package main

// main is required of package main; a shared library's is never run.
func main() {}
