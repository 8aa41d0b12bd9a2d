package randomizer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
)

// TestSampleRequestWriteSamples: the lines are the decoded reports Sample
// draws from the seeded source, as JSON arrays; the flags' errors are
// named.
func TestSampleRequestWriteSamples(t *testing.T) {
	q := SampleRequest{Name: "rinf", Eps0: 1, Clip: 1, Dim: 3, Input: "0.1,0.2,0.3", Samples: 4, Seed: 5}
	var out bytes.Buffer
	if err := q.WriteSamples(&out, true); err != nil {
		t.Fatal(err)
	}
	r, err := NewChecked("rinf", Config{Eps0: 1, Dim: 3, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	err = Sample(r, []float64{0.1, 0.2, 0.3}, NewSeededSource(5), 4, func(z []float64) error {
		fmt.Fprintf(&want, "[%s]\n", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(z)), ","), "[]"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Errorf("WriteSamples:\n%s\nwant:\n%s", out.String(), want.String())
	}
	for _, tc := range []struct {
		q    SampleRequest
		want string
	}{
		{SampleRequest{Name: "rinf", Eps0: 1, Clip: 1, Dim: 3, Input: "0.1,0.2,0.3"}, "--samples"},
		{SampleRequest{Name: "rinf", Eps0: 1, Clip: 1, Dim: 2, Input: "0.1,0.2,0.3", Samples: 1}, "--input"},
		{SampleRequest{Name: "rinf", Clip: 1, Dim: 3, Input: "0.1,0.2,0.3", Samples: 1}, "--eps0"},
	} {
		if err := tc.q.WriteSamples(&out, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", tc.q, err, tc.want)
		}
	}
}

// TestRequestFlags binds both requests' flags as the commands do.
func TestRequestFlags(t *testing.T) {
	var s SampleRequest
	var a AuditRequest
	for _, v := range []any{&s, &a} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		if err := cliflag.Bind(fs, v); err != nil {
			t.Fatal(err)
		}
		if u := fs.Lookup("randomizer").Usage; !strings.HasSuffix(u, strings.Join(Names, "|")) {
			t.Errorf("%T: --randomizer usage %q does not list Names", v, u)
		}
	}
	if s.Clip != 1 || s.Samples != 1 || a.Clip != 1 {
		t.Errorf("defaults: clip %g samples %d, audit clip %g", s.Clip, s.Samples, a.Clip)
	}
	a = AuditRequest{Name: "r1", Eps0: 1, Clip: 1, Dim: 3}
	if res, err := a.Audit(); err != nil || res.Err() != nil {
		t.Errorf("Audit of r1: %v, %v", err, res.Err())
	}
	if _, err := (AuditRequest{Name: "gaussian", Eps0: 1, Clip: 1, Dim: 3}).Audit(); err == nil || !strings.Contains(err.Error(), "not pure LDP") {
		t.Errorf("Audit of gaussian: %v", err)
	}
}
