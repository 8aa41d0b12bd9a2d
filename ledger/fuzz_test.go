package ledger

import (
	"context"
	"encoding/json"
	"slices"
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

// FuzzClaimReportIDs: a sequence of claims (the fuzzer's bytes: a round,
// a count, then that many one-byte ids, repeated) returns, on the memory
// store, exactly the replays of a plain model (an id's first round; a
// repeat within a call is a replay), and a re-claim of a call's ids under
// the same round returns exactly the repeats of that call and the ids
// recorded under other rounds.
func FuzzClaimReportIDs(f *testing.F) {
	f.Add([]byte{1, 3, 1, 2, 3, 2, 2, 1, 4, 1, 3, 5, 5, 5})
	f.Add([]byte{0, 0, 0, 1, 1, 7})
	f.Fuzz(func(t *testing.T, script []byte) {
		ctx := context.Background()
		s := NewMemoryStore()
		model := map[[16]byte]int64{}
		for len(script) >= 2 {
			round, n := int64(script[0]%8), int(script[1]%64)
			script = script[2:]
			n = min(n, len(script))
			batch := make([][16]byte, n)
			for i := range batch {
				batch[i] = rid(script[i])
			}
			script = script[n:]
			var want [][16]byte
			seen := map[[16]byte]bool{}
			for _, id := range batch {
				r, ok := model[id]
				if seen[id] || ok && r != round {
					want = append(want, id)
				} else if !ok {
					model[id] = round
				}
				seen[id] = true
			}
			for pass := range 2 { // the claim, then its idempotent re-claim
				got, err := s.ClaimReportIDs(ctx, "run", round, batch)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("pass %d: claim of %v in round %d: replays %v, want %v", pass, batch, round, got, want)
				}
			}
		}
	})
}
