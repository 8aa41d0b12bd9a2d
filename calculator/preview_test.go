package calculator

import (
	"encoding/json"
	"testing"
)

// TestPreviewRowsAreComputeRows: every preview row is the row Compute
// (account --bound all) gives for the same bound, with the same epsilon,
// kind and printed text; best, pld and certified are not in the preview
// (they come with the result); and Call answers it as JSON.
func TestPreviewRowsAreComputeRows(t *testing.T) {
	for _, query := range []string{
		"mechanism=subsampled-shuffle&n=10000&k=100&eps0=1&steps=10&delta=1e-6",
		"mechanism=shuffle&n=1000&eps0=1&steps=3&delta=1e-6",
		"mechanism=subsampled-shuffle-gaussian&n=60000&k=600&sigma=2&steps=50&delta=1e-5",
		"mechanism=sampled-gaussian&rate=0.1&sigma=2&steps=8&delta=1e-5",
	} {
		q, err := ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		prev, err := Preview(q)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		full, err := Compute(q)
		if err != nil {
			t.Fatal(err)
		}
		byBound := map[string]Row{}
		for _, r := range full.Rows {
			byBound[r.Bound] = r
		}
		if len(prev) == 0 {
			t.Errorf("%s: empty preview", query)
		}
		for _, r := range prev {
			switch r.Bound {
			case "best", "pld", "certified", "best-conjecture":
				t.Errorf("%s: preview has %s", query, r.Bound)
			}
			f, ok := byBound[r.Bound]
			if !ok {
				t.Errorf("%s: preview row %s is not a row of the result", query, r.Bound)
				continue
			}
			if r.Epsilon != f.Epsilon || r.Kind != f.Kind || r.Text != f.Text {
				t.Errorf("%s: %s preview %v %s %q, result %v %s %q", query, r.Bound, r.Epsilon, r.Kind, r.Text, f.Epsilon, f.Kind, f.Text)
			}
		}
		var ans struct {
			Result []Row `json:"result"`
		}
		if err := json.Unmarshal([]byte(Call(MethodPreview, query, 0)), &ans); err != nil || len(ans.Result) != len(prev) {
			t.Errorf("%s: Call(preview) = %d rows, %v; want %d", query, len(ans.Result), err, len(prev))
		}
	}
	if _, err := Preview(Query{Mechanism: "shuffle", Values: map[string]string{"n": "10", "eps0": "1", "steps": "1", "delta": "2"}}); err == nil {
		t.Error("Preview accepted delta 2")
	}
}
