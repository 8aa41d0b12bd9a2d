package figures

import (
	"strings"
	"testing"
)

func TestReadFrontier(t *testing.T) {
	in := "# comment\npoint\tshuffle R_inf\t1\t0.93\t0.004\npoint\tcentral\t0.5\t0.95\t0\n" +
		"point\tshuffle R_inf\t3\t0.95\t0.002\nline\tnon-private\t-\t0.97\t0\n"
	f, err := ReadFrontier(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Series) != 2 || len(f.Series[0].Points) != 2 || f.Series[0].Points[1].Epsilon != 3 || len(f.Lines) != 1 {
		t.Fatalf("parsed %+v", f)
	}
	if _, err := f.Plot(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"point\ta\t0\t0.9\t0\n",        // epsilon 0 on a log axis
		"point\ta\t1\t90\t0\n",         // accuracy in percent
		"point\ta\t1\t0.9\n",           // 4 columns
		"dot\ta\t1\t0.9\t0\n",          // unknown kind
		"line\tnon-private\t-\t1\t0\n", // no point at all
	} {
		if _, err := ReadFrontier(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
