package randomizer

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func allRandomizers(t testing.TB, d int) []Randomizer {
	t.Helper()
	var rs []Randomizer
	for _, name := range Names {
		dim := d
		switch name {
		case "rr":
			dim = 1
		case "krr", "privunit":
			dim = max(d, 2)
		}
		r, err := New(name, Config{Eps0: 1.5, Dim: dim, Radius: 1, Sigma: 1})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// TestReportSizes pins the wire sizes: log2(d)+1 payload bits for R_inf,
// R_1 and R_2 (3 bytes with the header at d = 26,010 and d = 13,000).
func TestReportSizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    int
		want int
	}{
		{"rr", 1, 2}, {"krr", 2, 2}, {"krr", 256, 2}, {"krr", 257, 3},
		{"rinf", 1, 2}, {"rinf", 128, 2}, {"rinf", 129, 3}, {"rinf", 13000, 3}, {"rinf", 26010, 3},
		{"rinf", 32768, 3}, {"rinf", 32769, 4},
		{"r1", 13000, 3}, {"r1", 26010, 3}, {"r1", 128, 2},
		{"r2", 26010, 3}, {"gaussian", 10, 81},
	} {
		r, err := New(tc.name, Config{Eps0: 1, Dim: tc.d, Sigma: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.ReportSize() != tc.want {
			t.Errorf("%s d=%d: ReportSize %d, want %d", tc.name, tc.d, r.ReportSize(), tc.want)
		}
		x := make([]float64, tc.d)
		if tc.name == "krr" {
			x[0] = 1
		}
		rep, err := r.Randomize(x, NewSeededSource(1))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep) != tc.want || rep[0]>>4 != WireVersion {
			t.Errorf("%s d=%d: report %x has wrong size or version", tc.name, tc.d, rep)
		}
	}
}

// TestRoundTripOutputs decodes every output of the discrete randomizers and
// checks that distinct outputs decode to distinct vectors.
func TestRoundTripOutputs(t *testing.T) {
	for _, r := range discreteCases(t)[:40] {
		seen := map[string]bool{}
		for i := range r.NumOutputs() {
			rep := r.Output(i)
			if len(rep) != r.ReportSize() {
				t.Fatalf("%s: output %d has size %d", r.Name(), i, len(rep))
			}
			z, err := r.Decode(rep)
			if err != nil {
				t.Fatalf("%s: output %d: %v", r.Name(), i, err)
			}
			key := string(mustBytes(z))
			if seen[key] {
				t.Fatalf("%s d=%d: two outputs decode to the same vector", r.Name(), r.Dim())
			}
			seen[key] = true
		}
	}
}

func mustBytes(z []float64) []byte {
	var b bytes.Buffer
	for _, v := range z {
		b.WriteString(formatBits(v))
	}
	return b.Bytes()
}

func formatBits(v float64) string {
	u := math.Float64bits(v)
	s := make([]byte, 8)
	for i := range s {
		s[i] = byte(u >> (8 * i))
	}
	return string(s)
}

// TestMalformedRejected flips every header field, the length, the padding
// and the index range, and expects ErrMalformed with sum untouched.
func TestMalformedRejected(t *testing.T) {
	ri, _ := NewRInf(1, 5, 1)  // 3 index bits, indices 5..7 invalid
	r1, _ := NewR1(1, 5, 1)    // D = 8: all 3-bit indices valid
	r2, _ := NewR2(1, 5, 1)    // like R_inf
	krr, _ := NewKRR(1, 5)     // 3 bits, categories 5..7 invalid
	rr, _ := NewBinaryRR(1, 1) // 1 bit
	g, _ := NewGaussian(1, 2, 1)
	nan := make(Report, 17)
	nan[0] = header(kindGaussian)
	copy(nan[1:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}) // NaN
	for _, tc := range []struct {
		r   Randomizer
		rep Report
	}{
		{ri, nil},
		{ri, Report{}},
		{ri, Report{0x13}},                         // too short
		{ri, Report{0x13, 0, 0}},                   // too long
		{ri, Report{0x23, 0}},                      // version 2
		{ri, Report{0x14, 0}},                      // kind r1
		{ri, Report{0x13, 5}},                      // index 5 ≥ d
		{ri, Report{0x13, 0x10}},                   // padding bit set
		{r2, Report{0x15, 7}},                      // index 7 ≥ d
		{r1, Report{0x14, 0x80}},                   // padding bit set
		{krr, Report{0x12, 6}},                     // category 6 ≥ k
		{rr, Report{0x11, 2}},                      // padding bit
		{g, Report{0x16, 0}},                       // short
		{g, nan},                                   // NaN coordinate
		{g, append(Report{0x16}, nan[1:]...)[:16]}, // short by one
	} {
		sum := make([]float64, tc.r.Dim())
		err := tc.r.AddDecoded(tc.rep, 1, sum)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: report %x: err = %v, want ErrMalformed", tc.r.Name(), tc.rep, err)
		}
		for _, v := range sum {
			if v != 0 {
				t.Errorf("%s: report %x modified sum", tc.r.Name(), tc.rep)
			}
		}
		if _, err := tc.r.Decode(tc.rep); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode(%x) err = %v", tc.r.Name(), tc.rep, err)
		}
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder: each must either
// return ErrMalformed or a finite vector of length Dim, and accepted reports
// of the discrete randomizers must be byte-identical to a listed output
// (the encoding is canonical).
func FuzzDecode(f *testing.F) {
	for _, s := range [][]byte{{0x13, 2}, {0x14, 9}, {0x11, 1}, {0x12, 3}, {0x15, 0x0c}, {0x16}, {}, {0xff, 0xff, 0xff}} {
		f.Add(s)
	}
	rs := allRandomizers(f, 6)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, r := range rs {
			z, err := r.Decode(Report(b))
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%s: error %v does not wrap ErrMalformed", r.Name(), err)
				}
				continue
			}
			if len(z) != r.Dim() || len(b) != r.ReportSize() {
				t.Fatalf("%s: accepted %x of wrong size", r.Name(), b)
			}
			for _, v := range z {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: decoded non-finite value from %x", r.Name(), b)
				}
			}
			if d, ok := r.(Discrete); ok {
				found := false
				for i := range d.NumOutputs() {
					if bytes.Equal(d.Output(i), b) {
						found = true
						break
					}
				}
				if !found {
					t.Fatalf("%s: accepted non-canonical report %x", r.Name(), b)
				}
			}
		}
	})
}

// TestDomainRejected checks that inputs outside the domain are refused with
// ErrDomain rather than silently clipped.
func TestDomainRejected(t *testing.T) {
	for _, r := range allRandomizers(t, 4) {
		bad := [][]float64{make([]float64, r.Dim()+1), {math.NaN()}}
		over := make([]float64, r.Dim())
		over[0] = 1.01 * r.Radius()
		if r.Dim() > 1 {
			over[1] = 1.01 * r.Radius() // outside the l_1 and l_2 balls too
		}
		bad = append(bad, over)
		if r.Dim() == 1 {
			bad[1] = []float64{math.NaN()}
		} else {
			bad[1] = make([]float64, r.Dim())
			bad[1][0] = math.NaN()
		}
		for _, x := range bad {
			if _, err := r.Randomize(x, NewSeededSource(1)); !errors.Is(err, ErrDomain) {
				t.Errorf("%s: Randomize(%v) err = %v, want ErrDomain", r.Name(), x, err)
			}
		}
	}
}

func TestNewRejectsBadParameters(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"rinf", Config{Eps0: 0, Dim: 3}},
		{"rinf", Config{Eps0: -1, Dim: 3}},
		{"rinf", Config{Eps0: math.NaN(), Dim: 3}},
		{"rinf", Config{Eps0: 41, Dim: 3}},
		{"rinf", Config{Eps0: 1, Dim: 0}},
		{"rinf", Config{Eps0: 1, Dim: 3, Radius: -1}},
		{"rinf", Config{Eps0: 1, Dim: 3, Radius: math.Inf(1)}},
		{"rr", Config{Eps0: 1, Dim: 2}},
		{"krr", Config{Eps0: 1, Dim: 1}},
		{"gaussian", Config{Dim: 3}},
		{"gaussian", Config{Dim: 3, Sigma: math.NaN()}},
		{"laplace", Config{Eps0: 1, Dim: 3}},
	} {
		if _, err := New(tc.name, tc.cfg); err == nil {
			t.Errorf("New(%q, %+v) accepted bad parameters", tc.name, tc.cfg)
		}
	}
}

// TestWireVectors pins the byte layout of version 1 so that an accidental
// change of the format is caught: header 0x13 (version 1, R_inf), then
// j = 12345 in 15 bits and the sign bit (bit 15) little-endian.
func TestWireVectors(t *testing.T) {
	ri, _ := NewRInf(1, 26010, 1)
	r1, _ := NewR1(1, 13000, 1)
	krr, _ := NewKRR(1, 300)
	rr, _ := NewBinaryRR(1, 1)
	for _, tc := range []struct {
		got  Report
		want []byte
	}{
		{ri.Output(2*12345 + 1), []byte{0x13, 0x39, 0xb0}}, // 12345 = 0x3039, sign bit 15
		{ri.Output(2 * 12345), []byte{0x13, 0x39, 0x30}},
		{ri.Output(2*26009 + 1), []byte{0x13, 0x99, 0xe5}}, // 26009 = 0x6599
		{r1.Output(2*16383 + 1), []byte{0x14, 0xff, 0x7f}}, // D = 16384: 14 index bits, sign bit 14
		{krr.Output(299), []byte{0x12, 0x2b, 0x01}},
		{rr.Output(1), []byte{0x11, 0x01}},
	} {
		if !bytes.Equal(tc.got, tc.want) {
			t.Errorf("report %x, want %x", []byte(tc.got), tc.want)
		}
	}
	j, neg, err := decodeIndexSign(Report{0x13, 0x39, 0xb0}, kindRInf, ri.ib, ri.d)
	if err != nil || j != 12345 || !neg {
		t.Errorf("decode: j=%d neg=%v err=%v", j, neg, err)
	}
}
