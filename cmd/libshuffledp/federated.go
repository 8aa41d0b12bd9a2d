package main

/*
#include <stdlib.h>

// The callbacks of the federated Python API (python/shuffledp/federated.py):
// each returns 0, or non-zero with a message in err (errlen bytes, NUL-
// terminated by the callee). Go cannot call a C function pointer, so each
// is called through one of the trampolines below.
typedef int (*shuffledp_client_fn)(void *ctx, long long client, const long long *examples, long long nexamples, const double *params, double *update, long long n, char *err, long long errlen);
typedef int (*shuffledp_server_fn)(void *ctx, const double *theta, const double *mean, double *next, long long n, char *err, long long errlen);
typedef int (*shuffledp_eval_fn)(void *ctx, const double *theta, long long n, double *out, char *err, long long errlen);

static int call_client(shuffledp_client_fn f, void *ctx, long long client, const long long *examples, long long nexamples, const double *params, double *update, long long n, char *err, long long errlen) {
	return f(ctx, client, examples, nexamples, params, update, n, err, errlen);
}
static int call_server(shuffledp_server_fn f, void *ctx, const double *theta, const double *mean, double *next, long long n, char *err, long long errlen) {
	return f(ctx, theta, mean, next, n, err, errlen);
}
static int call_eval(shuffledp_eval_fn f, void *ctx, const double *theta, long long n, double *out, char *err, long long errlen) {
	return f(ctx, theta, n, out, err, errlen);
}
*/
import "C"

import (
	"encoding/json"
	"errors"
	"os"
	"unsafe"

	"github.com/shuffledp/shuffledp/training"
)

// errLen is the size of the buffer a callback writes its error into.
const errLen = 4096

// callbackErr is the error of a callback that returned non-zero with its
// message in buf.
func callbackErr(buf *C.char) error {
	msg := C.GoString(buf)
	if msg == "" {
		msg = "failed (no message)"
	}
	return errors.New(msg)
}

//export shuffledp_run
func shuffledp_run(role, request *C.char, theta0 *C.double, n C.longlong,
	client C.shuffledp_client_fn, server C.shuffledp_server_fn, eval C.shuffledp_eval_fn, ctx unsafe.Pointer) *C.char {
	var req runRequest
	if err := json.Unmarshal([]byte(C.GoString(request)), &req); err != nil {
		return C.CString(string(errorJSON(err)))
	}
	fns := callbacks{}
	if theta0 != nil && n > 0 {
		fns.theta0 = append([]float64(nil), unsafe.Slice((*float64)(unsafe.Pointer(theta0)), int(n))...)
	}
	if client != nil {
		fns.client = func(c int64, examples []int, params, update []float64) error {
			buf := (*C.char)(C.calloc(errLen, 1))
			defer C.free(unsafe.Pointer(buf))
			ex := make([]int64, len(examples)+1) // never empty: &ex[0] exists
			for i, e := range examples {
				ex[i] = int64(e)
			}
			if rc := C.call_client(client, ctx, C.longlong(c), (*C.longlong)(unsafe.Pointer(&ex[0])), C.longlong(len(examples)), (*C.double)(unsafe.Pointer(&params[0])), (*C.double)(unsafe.Pointer(&update[0])), C.longlong(len(update)), buf, errLen); rc != 0 {
				return callbackErr(buf)
			}
			return nil
		}
	}
	if server != nil {
		fns.server = func(theta, mean, next []float64) error {
			buf := (*C.char)(C.calloc(errLen, 1))
			defer C.free(unsafe.Pointer(buf))
			if rc := C.call_server(server, ctx, (*C.double)(unsafe.Pointer(&theta[0])), (*C.double)(unsafe.Pointer(&mean[0])), (*C.double)(unsafe.Pointer(&next[0])), C.longlong(len(next)), buf, errLen); rc != 0 {
				return callbackErr(buf)
			}
			return nil
		}
	}
	if eval != nil {
		fns.eval = func(theta []float64) (training.Evaluation, error) {
			buf := (*C.char)(C.calloc(errLen, 1))
			defer C.free(unsafe.Pointer(buf))
			var out [2]float64
			if rc := C.call_eval(eval, ctx, (*C.double)(unsafe.Pointer(&theta[0])), C.longlong(len(theta)), (*C.double)(unsafe.Pointer(&out[0])), buf, errLen); rc != 0 {
				return training.Evaluation{}, callbackErr(buf)
			}
			return training.Evaluation{Accuracy: out[0], Loss: out[1]}, nil
		}
	}
	return C.CString(string(run(C.GoString(role), req, fns, os.Stderr)))
}
