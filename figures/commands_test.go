package figures

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
)

func TestWriteList(t *testing.T) {
	var out bytes.Buffer
	if err := WriteList(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(List())+1 || !strings.HasPrefix(lines[len(lines)-1], RatiosName+" ") {
		t.Fatalf("list:\n%s", out.String())
	}
	for i, f := range List() {
		if !strings.HasPrefix(lines[i], f.Name+" ") || !strings.HasSuffix(lines[i], f.Caption) {
			t.Errorf("line %d %q is not %s and its caption", i, lines[i], f.Name)
		}
	}
}

func TestCheckBuild(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		points    int
		format    string
		err       string
	}{
		{"2a", "f.svg", 3, "svg", ""},
		{"neurips21-fig2a", "f.png", 21, "png", ""},
		{"nope", "f.svg", 3, "", "figure must be one of"},
		{"2a", "", 3, "", "--out is required"},
		{"2a", "f.gif", 3, "", "gif"},
		{"2a", "f.svg", 1, "", "points"},
	} {
		format, err := CheckBuild(tc.name, tc.out, tc.points)
		if tc.err == "" && (err != nil || format != tc.format) {
			t.Errorf("CheckBuild(%q, %q, %d) = %q, %v; want %q", tc.name, tc.out, tc.points, format, err, tc.format)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckBuild(%q, %q, %d): error %v, want one containing %q", tc.name, tc.out, tc.points, err, tc.err)
		}
	}
}

// TestMetricsPlotFlags binds MetricsPlot's flags as train plot does: the
// defaults are the plot's, --reference lists the references.
func TestMetricsPlotFlags(t *testing.T) {
	var m MetricsPlot
	fs := pflag.NewFlagSet("plot", pflag.ContinueOnError)
	if err := cliflag.Bind(fs, &m); err != nil {
		t.Fatal(err)
	}
	if m.X != AxisEpsilon || m.Title == "" {
		t.Errorf("defaults: x %q, title %q", m.X, m.Title)
	}
	if u := fs.Lookup("reference").Usage; !strings.HasSuffix(u, strings.Join(ReferenceNames(), ", ")) {
		t.Errorf("--reference usage %q does not list the references", u)
	}
	if err := fs.Parse([]string{"--metrics", "a.jsonl", "--metrics", "b,c.jsonl", "--label", "a"}); err != nil || len(m.Files) != 2 || m.Files[1] != "b,c.jsonl" {
		t.Errorf("parse: %v, files %q", err, m.Files)
	}
}
