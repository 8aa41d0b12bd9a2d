package ledger

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeEvent: text a store may hold either decodes to a valid event
// whose encoding decodes to the same event (so that the stored text
// identifies the event: a retry compares equal, a different event does
// not), or is refused; it never panics.
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{
		`{"mechanism":"subsampled-shuffle","n":60000,"k":1000,"eps0":2}`,
		`{"mechanism":"shuffle","n":1000,"eps0":1}`,
		`{"mechanism":"subsampled-shuffle","n":60000,"k":1000,"eps0":2,"extra":1}`,
		`{"mechanism":"shuffle","n":1000,"eps0":1e999}`,
		`{"mechanism":"shuffle","n":1000,"eps0":1} {}`,
		`{"mechanism":"shuffle-gaussian","n":1000,"sigma":0.5}`,
		`null`, `{}`, `[`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ev, err := DecodeEvent(text)
		if err != nil {
			return
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("DecodeEvent(%q) returned an invalid event: %v", text, err)
		}
		enc, err := EncodeEvent(ev)
		if err != nil {
			t.Fatalf("EncodeEvent(%+v): %v", ev, err)
		}
		back, err := DecodeEvent(enc)
		if err != nil {
			t.Fatalf("DecodeEvent(EncodeEvent(%+v)) = %v", ev, err)
		}
		enc2, _ := EncodeEvent(back)
		if enc2 != enc {
			t.Fatalf("encoding not stable: %s then %s", enc, enc2)
		}
		a := Entry{Run: "r", Round: 1, Event: ev, Reports: 1, Time: fixedTime}
		b := a
		b.Event = back
		if !a.same(b) {
			t.Fatalf("%+v and its round trip %+v are not the same entry", ev, back)
		}
	})
}

// FuzzEntryJSON: an Entry's JSON form (Summary.Entries, `ledger show
// --json`) decodes to the same entry.
func FuzzEntryJSON(f *testing.F) {
	f.Add("run-1", int64(3), `{"mechanism":"subsampled-shuffle","n":60000,"k":1000,"eps0":2}`, 1000, []byte("batch"))
	f.Add("ünï", int64(0), `{"mechanism":"shuffle","n":10,"eps0":0.1}`, 10, []byte{})
	f.Fuzz(func(t *testing.T, run string, round int64, evText string, reports int, batch []byte) {
		ev, err := DecodeEvent(evText)
		if err != nil {
			return
		}
		var d Digest
		copy(d[:], batch)
		e := Entry{Run: run, Round: round, Event: ev, Reports: reports, Digest: d, Time: fixedTime}
		if e.Validate() != nil {
			return
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Entry
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		if !e.same(back) || !back.Time.Equal(e.Time) || back.Validate() != nil {
			t.Fatalf("%+v -> %s -> %+v", e, b, back)
		}
	})
}
