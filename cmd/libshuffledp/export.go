package main

// #include <stdlib.h>
import "C"

import (
	"unsafe"

	"github.com/shuffledp/shuffledp/account"
)

//export shuffledp_call
func shuffledp_call(method, request *C.char) *C.char {
	return C.CString(string(account.Call(C.GoString(method), []byte(C.GoString(request)))))
}

//export shuffledp_free
func shuffledp_free(response *C.char) { C.free(unsafe.Pointer(response)) }
