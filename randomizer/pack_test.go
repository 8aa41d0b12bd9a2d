package randomizer

import (
	"bytes"
	"errors"
	"testing"
)

func TestPackRoundTrip(t *testing.T) {
	for _, d := range []int{1, 5, 26010} {
		for _, r := range allRandomizers(t, d) {
			src := NewSeededSource(uint64(d))
			x := make([]float64, r.Dim())
			x[0] = 0.5
			if r.Name() == "rr" || r.Name() == "krr" {
				x[0] = 1
			}
			n := 37
			if r.ReportSize() > 1000 {
				n = 3
			}
			reps := make([]Report, n)
			for i := range reps {
				var err error
				if reps[i], err = r.Randomize(x, src); err != nil {
					t.Fatal(err)
				}
			}
			packed, err := PackReports(r, reps)
			if err != nil {
				t.Fatalf("%s d=%d: %v", r.Name(), d, err)
			}
			got, err := UnpackReports(r, packed)
			if err != nil {
				t.Fatalf("%s d=%d: %v", r.Name(), d, err)
			}
			if len(got) != n {
				t.Fatalf("%s: %d reports back", r.Name(), len(got))
			}
			for i := range got {
				if !bytes.Equal(got[i], reps[i]) {
					t.Fatalf("%s d=%d: report %d %x came back as %x", r.Name(), d, i, reps[i], got[i])
				}
			}
		}
	}
	// Size: 10,000 R_inf reports at d = 26,010 take 16 bits each.
	ri, _ := NewRInf(1, 26010, 1)
	reps := make([]Report, 10000)
	for i := range reps {
		reps[i] = ri.Output(i)
	}
	packed, err := PackReports(ri, reps)
	if err != nil {
		t.Fatal(err)
	}
	if len(packed) != 1+2+20000 {
		t.Errorf("packed size %d, want 20003", len(packed))
	}
}

func TestUnpackRejects(t *testing.T) {
	ri, _ := NewRInf(1, 5, 1) // 4-bit payloads, indices ≥ 5 invalid
	good, _ := PackReports(ri, []Report{ri.Output(0), ri.Output(9)})
	if _, err := UnpackReports(ri, good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{
		nil,
		{0x13},
		{0x14, 2, 0x00},       // kind r1
		{0x13, 2, 0x00, 0x00}, // too long
		{0x13, 3, 0x00},       // too short for 3 reports
		{0x13, 2, 0x07},       // index 7 ≥ 5
		{0x13, 1, 0x10},       // padding bit set
		{0x13, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // huge count
	} {
		if _, err := UnpackReports(ri, bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("UnpackReports(%x) err = %v", bad, err)
		}
	}
	if _, err := PackReports(ri, []Report{{0x13, 7}}); !errors.Is(err, ErrMalformed) {
		t.Errorf("PackReports accepted an invalid report: %v", err)
	}
}

// FuzzUnpack: arbitrary bytes either fail with ErrMalformed or unpack to
// valid reports that pack back to the same bytes (canonical encoding).
func FuzzUnpack(f *testing.F) {
	f.Add([]byte{0x13, 2, 0x90})
	f.Add([]byte{0x14, 3, 0xff, 0x0f})
	f.Add([]byte{0x11, 8, 0xa5})
	rs := allRandomizers(f, 5)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, r := range rs {
			reps, err := UnpackReports(r, b)
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%s: %v does not wrap ErrMalformed", r.Name(), err)
				}
				continue
			}
			again, err := PackReports(r, reps)
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("%s: %x unpacked but repacks to %x (%v)", r.Name(), b, again, err)
			}
		}
	})
}
