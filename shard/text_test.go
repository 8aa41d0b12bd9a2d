package shard

import (
	"bytes"
	"testing"

	"github.com/shuffledp/shuffledp/ledger"
)

func TestReportWriteText(t *testing.T) {
	r := Report{Run: "RUN", Epsilon: 1.5, Worst: 1, Shards: []ledger.Summary{
		{Run: "RUN#shard-0-of-2", Rounds: 3, Epsilon: 1.25, Delta: 1e-5},
		{Run: "RUN#shard-1-of-2", Rounds: 3, Epsilon: 1.5, Delta: 1e-5},
	}}
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	want := "shard    ledger run                                     rounds  epsilon  delta\n" +
		"0        RUN#shard-0-of-2                               3       1.25     1e-05\n" +
		"1        RUN#shard-1-of-2                               3       1.5      1e-05\n" +
		"run RUN  (max over 2 shards: every client's guarantee)          1.5      \n"
	if out.String() != want {
		t.Errorf("WriteText:\n%q\nwant:\n%q", out.String(), want)
	}
}
