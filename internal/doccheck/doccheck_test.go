package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
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

// TestRepositoryLinksResolve: every relative link of every Markdown file of
// the repository (README.md, docs/, BENCHMARKS.md, results/...) resolves.
func TestRepositoryLinksResolve(t *testing.T) {
	root := repoRoot(t)
	probs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error(p)
	}
	// The check must see the front door's links at all.
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(Links("README.md", string(md))); n < 3 {
		t.Errorf("README.md has %d relative links; the check is not reading it", n)
	}
}

func TestAnchor(t *testing.T) {
	for in, want := range map[string]string{
		" Fig. 3 and Fig. 6 reproduction: what we obtain":       "fig-3-and-fig-6-reproduction-what-we-obtain",
		" The ledger in PostgreSQL (`--ledger postgres://...`)": "the-ledger-in-postgresql---ledger-postgres",
		" Accounting: RDP of the shuffle model":                 "accounting-rdp-of-the-shuffle-model",
		" ICLR'23 Fig. 1 reproduction":                          "iclr23-fig-1-reproduction",
		" Rényi DP":                                             "rényi-dp",
	} {
		if got := Anchor(in); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckFindsBrokenLinks is the negative control: a tree with a missing
// file, a missing anchor, and links that must be ignored (code, URLs).
func TestCheckFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Top",
		"[ok](docs/a.md) [ok anchor](docs/a.md#second-part) [ok dir](docs/) [self](#top)",
		"[gone](docs/missing.md) [bad anchor](docs/a.md#nowhere) [web](https://example.com/x.md)",
		"`[in code](nope.md)`",
		"```",
		"[in fence](nope.md)",
		"```",
		"[ref]: docs/also-missing.md",
	}, "\n"))
	write("docs/a.md", "# A\n\n## Second part\n\n[up](../README.md#top) [up bad](../README.md#bottom)\n")
	probs, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"docs/missing.md", "#nowhere", "docs/also-missing.md", "#bottom"}
	if len(probs) != len(want) {
		t.Fatalf("problems = %q, want %d naming %q", probs, len(want), want)
	}
	for _, w := range want {
		found := false
		for _, p := range probs {
			found = found || strings.Contains(p, w)
		}
		if !found {
			t.Errorf("no problem names %q: %q", w, probs)
		}
	}
}

// TestReadmeIsAFrontDoor: README.md stays at most 200 lines, opens with the
// two commands (the main job, the tests), and .ci/run runs exactly the
// README's test command.
func TestReadmeIsAFrontDoor(t *testing.T) {
	root := repoRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(md), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; the front door holds at most 200 (move detail into docs/)", len(lines))
	}
	main, test, err := FrontDoorCommands(string(md))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(main, "go run ./cmd/") {
		t.Errorf("README's main command = %q, want a go run of the binary", main)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(string(ci), "\n") {
		found = found || strings.TrimSpace(l) == test
	}
	if !found {
		t.Errorf(".ci/run has no line that is exactly the README's test command %q", test)
	}
}

func TestFrontDoorCommands(t *testing.T) {
	md := "# x\n\ntext\n\n```sh\ngo run ./cmd/x account   # the main job\ngo test ./...    # the tests\n```\n"
	m, c, err := FrontDoorCommands(md)
	if err != nil || m != "go run ./cmd/x account" || c != "go test ./..." {
		t.Errorf("FrontDoorCommands = %q, %q, %v", m, c, err)
	}
	for _, bad := range []string{"# x\nno code\n", "```sh\ngo run ./cmd/x\n```\n"} {
		if _, _, err := FrontDoorCommands(bad); err == nil {
			t.Errorf("FrontDoorCommands(%q) accepted", bad)
		}
	}
}
