package layering

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// upwardImports are the imports that run against ARCHITECTURE.md's layer
// table, each excused by name with the reason. None does today: the last
// two (node → training, figures → training) went when simulation and
// deployment came to share one training loop and the metrics record moved
// below both. An entry that no longer occurs fails the test, so the list
// only shrinks.
var upwardImports = map[Edge]string{}

// moduleRoot walks up from the test's directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// moduleImports runs `go list` on every package of the module and returns
// each package's non-test imports inside the module, paths relative to it.
// Test files may import packages above them (a test wires the roles it
// exercises), so only the production graph is checked.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	run := func(args ...string) string {
		cmd := exec.Command(goTool(), args...)
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out)
	}
	mod := strings.TrimSpace(run("list", "-m"))
	out := run("list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	rel := func(p string) (string, bool) {
		if p == mod {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, mod+"/")
		return r, ok
	}
	g := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		from, ok := rel(f[0])
		if !ok {
			t.Fatalf("go list printed a package outside the module %s: %s", mod, f[0])
		}
		g[from] = []string{}
		for _, imp := range f[1:] {
			if to, ok := rel(imp); ok {
				g[from] = append(g[from], to)
			}
		}
	}
	return g
}

// TestModuleFollowsLayerTable is the layering rule itself: every package of
// the module is in ARCHITECTURE.md's table and imports only packages listed
// below it, but for the excused edges of upwardImports.
func TestModuleFollowsLayerTable(t *testing.T) {
	root := moduleRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseTable(md)
	if err != nil {
		t.Fatal(err)
	}
	g := moduleImports(t, root)
	if len(g) < 20 {
		t.Fatalf("go list found only %d packages: %v", len(g), g)
	}
	for _, p := range Check(rows, g, upwardImports) {
		t.Error(p)
	}
	t.Logf("%d packages in %d rows; upward imports today: %v", len(g), len(rows), Upward(rows, g))
}

const sampleTable = `# A

Some text | not a table.

| layer | package | provides |
|---|---|---|
| top | ` + "`cmd/x`" + ` | the binary |
| | ` + "`cmd/x`" + ` ` + "`sub`" + ` | the same binary, second row |
| engine | ` + "`engine`" + ` | the loop |
| | ` + "`node`" + ` | the network |
| base | ` + "`internal/math`" + ` | primitives |

| layer | package |
|---|---|
| other | ` + "`ignored`" + ` |
`

func TestParseTable(t *testing.T) {
	rows, err := ParseTable([]byte(sampleTable))
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{"top", "cmd/x", 7}, {"engine", "engine", 9}, {"engine", "node", 10}, {"base", "internal/math", 11}}
	if len(rows) != len(want) {
		t.Fatalf("rows = %v, want %v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
	for _, bad := range []string{"no table here\n", "| layer | package |\n|---|---|\n| x | no code |\n"} {
		if _, err := ParseTable([]byte(bad)); err == nil {
			t.Errorf("ParseTable(%q) accepted", bad)
		}
	}
}

// TestCheckNamesEveryProblem is the negative control: each kind of breach is
// reported, naming the edge or the package, and a clean graph gives nothing.
func TestCheckNamesEveryProblem(t *testing.T) {
	rows, err := ParseTable([]byte(sampleTable))
	if err != nil {
		t.Fatal(err)
	}
	clean := map[string][]string{
		"cmd/x":         {"engine", "node", "internal/math"},
		"engine":        {"node", "internal/math"},
		"node":          {"internal/math"},
		"internal/math": {},
	}
	if p := Check(rows, clean, nil); len(p) != 0 {
		t.Fatalf("clean graph: %v", p)
	}
	cases := []struct {
		name    string
		graph   map[string][]string
		allowed map[Edge]string
		want    string
	}{
		{"upward across layers", map[string][]string{"cmd/x": {}, "engine": {}, "node": {}, "internal/math": {"engine"}}, nil,
			"import internal/math → engine runs upward"},
		{"upward within a layer", map[string][]string{"cmd/x": {}, "engine": {}, "node": {"engine"}, "internal/math": {}}, nil,
			"import node → engine runs upward"},
		{"into the binary", map[string][]string{"cmd/x": {}, "engine": {"cmd/x"}, "node": {}, "internal/math": {}}, nil,
			"import engine → cmd/x runs upward"},
		{"package not in the table", map[string][]string{"cmd/x": {}, "engine": {}, "node": {}, "internal/math": {}, "telemetry": {}}, nil,
			"package telemetry is not in ARCHITECTURE.md's layer table"},
		{"row naming no package", map[string][]string{"cmd/x": {}, "engine": {}, "internal/math": {}}, nil,
			"lists node, which is not a package of the module"},
		{"stale excuse", clean, map[Edge]string{{"node", "engine"}: "was fixed"},
			"the excused upward import node → engine no longer occurs"},
	}
	for _, c := range cases {
		p := Check(rows, c.graph, c.allowed)
		if len(p) != 1 || !strings.Contains(p[0], c.want) {
			t.Errorf("%s: got %q, want one problem containing %q", c.name, p, c.want)
		}
	}
	// An excused edge is not reported, and Upward still lists it.
	g := map[string][]string{"cmd/x": {}, "engine": {}, "node": {"engine"}, "internal/math": {}}
	if p := Check(rows, g, map[Edge]string{{"node", "engine"}: "known"}); len(p) != 0 {
		t.Errorf("excused edge reported: %v", p)
	}
	if up := Upward(rows, g); len(up) != 1 || up[0] != (Edge{"node", "engine"}) {
		t.Errorf("Upward = %v", up)
	}
}
