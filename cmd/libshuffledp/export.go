package main

// #include <stdlib.h>
import "C"

import (
	"context"
	"encoding/json"
	"unsafe"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/ledger"
)

//export shuffledp_call
func shuffledp_call(method, request *C.char) *C.char {
	m, req := C.GoString(method), []byte(C.GoString(request))
	if m == "ledger.show" {
		return C.CString(string(ledgerShow(req)))
	}
	return C.CString(string(account.Call(m, req)))
}

// ledgerShow answers method "ledger.show": the request is ledger.Show as
// JSON ({"state": DIR} or {"ledger": URL}, "run", "delta", "entries",
// "accountant": ledger by default, the run's own number, as `ledger show`),
// the result what `shuffledp ledger show --json` prints (ledger.Report).
func ledgerShow(req []byte) []byte {
	var q struct {
		State      string  `json:"state"`
		Ledger     string  `json:"ledger"`
		Run        string  `json:"run"`
		Delta      float64 `json:"delta"`
		Entries    bool    `json:"entries"`
		Accountant string  `json:"accountant"`
	}
	if err := json.Unmarshal(req, &q); err != nil {
		return errorJSON(err)
	}
	if q.Accountant == "" {
		q.Accountant = ledger.AccountantLedger // the run's one number
	}
	r, err := ledger.Show{Source: ledger.Source{Dir: q.State, Target: q.Ledger}, Run: q.Run, Delta: q.Delta, Entries: q.Entries,
		Accountant: q.Accountant}.Report(context.Background())
	if err != nil {
		return errorJSON(err)
	}
	b, err := json.Marshal(map[string]any{"result": r})
	if err != nil {
		return errorJSON(err)
	}
	return b
}

//export shuffledp_free
func shuffledp_free(response *C.char) { C.free(unsafe.Pointer(response)) }
