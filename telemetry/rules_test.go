package telemetry

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// deployDir holds deploy/prometheus.yml, rules.yml and rules_test.yml.
var deployDir = filepath.Join("..", "deploy")

// promtool returns Debian's promtool (package prometheus), or skips the
// test when there is none and SHUFFLEDP_REQUIRE_PROMTOOL is unset (CI sets
// it and installs the package: a missing promtool fails there).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err == nil {
		return p
	}
	if os.Getenv("SHUFFLEDP_REQUIRE_PROMTOOL") != "" {
		t.Fatal("no promtool on PATH and SHUFFLEDP_REQUIRE_PROMTOOL is set (apt-get install -y prometheus)")
	}
	t.Skip("no promtool on PATH (apt-get install -y prometheus; SHUFFLEDP_REQUIRE_PROMTOOL=1 makes this a failure)")
	return ""
}

// TestPrometheusRules validates deploy/prometheus.yml and deploy/rules.yml
// with promtool and runs the rules' unit tests (deploy/rules_test.yml);
// then, as a negative control, it runs the same unit tests against rules
// whose thresholds were moved and checks that they fail.
func TestPrometheusRules(t *testing.T) {
	pt := promtool(t)
	run := func(dir string, args ...string) (string, error) {
		cmd := exec.Command(pt, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{
		{"check", "config", "prometheus.yml"},
		{"check", "rules", "rules.yml"},
		{"test", "rules", "rules_test.yml"},
	} {
		if out, err := run(deployDir, args...); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	rules, err := os.ReadFile(filepath.Join(deployDir, "rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(deployDir, "rules_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mut := range []struct{ from, to string }{
		{"shuffledp:shuffler_epsilon_budget_used:ratio > 0.9", "shuffledp:shuffler_epsilon_budget_used:ratio > 0.95"},
		{"shuffledp:shuffler_dummy_ratio:rate10m > 0.2", "shuffledp:shuffler_dummy_ratio:rate10m > 0.35"},
		{"> 5 * shuffledp_shuffler_round_timeout_seconds", "> 20 * shuffledp_shuffler_round_timeout_seconds"},
	} {
		if !strings.Contains(string(rules), mut.from) {
			t.Fatalf("rules.yml lacks %q", mut.from)
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "rules.yml"), []byte(strings.Replace(string(rules), mut.from, mut.to, 1)), 0o644)
		os.WriteFile(filepath.Join(dir, "rules_test.yml"), tests, 0o644)
		if out, err := run(dir, "test", "rules", "rules_test.yml"); err == nil {
			t.Errorf("rules with %q instead of %q pass the unit tests:\n%s", mut.to, mut.from, out)
		}
	}
}

// TestRuleSeriesRegistered checks that every metric deploy/rules.yml uses
// is registered by the role it names (a histogram by its _sum or _count),
// and that every label value it matches is in the metric's closed set.
func TestRuleSeriesRegistered(t *testing.T) {
	rules, err := os.ReadFile(filepath.Join(deployDir, "rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{}
	for role, register := range map[string]func(*testing.T) []string{
		"server": func(t *testing.T) []string {
			reg := NewRegistry()
			m, err := NewServerMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			m.RoundAggregated(1, time.Millisecond)
			m.Accuracy("raw", 0.5)
			return gathered(t, reg)
		},
		"shuffler": func(t *testing.T) []string {
			reg := NewRegistry()
			if _, err := NewShufflerMetrics(reg); err != nil {
				t.Fatal(err)
			}
			return gathered(t, reg)
		},
	} {
		names[role] = register(t)
	}
	var body []string
	for _, line := range strings.Split(string(rules), "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		body = append(body, line)
	}
	text := strings.Join(body, "\n")
	used := regexp.MustCompile(`\bshuffledp_(server|shuffler)_[a-z_]+\b`).FindAllStringSubmatch(text, -1)
	if len(used) < 8 {
		t.Fatalf("only %d metric uses found in rules.yml", len(used))
	}
	for _, u := range used {
		name, role := u[0], u[1]
		base := regexp.MustCompile(`_(sum|count|bucket)$`).ReplaceAllString(name, "")
		found := false
		for _, n := range names[role] {
			if n == name || n == base {
				found = true
			}
		}
		if !found {
			t.Errorf("rules.yml uses %s, which the %s's metrics do not register", name, role)
		}
	}
	for _, m := range regexp.MustCompile(`reason="([a-z_]+)"`).FindAllStringSubmatch(text, -1) {
		ok := false
		for _, r := range append(append([]Reason{}, ReportReasons...), RoundReasons...) {
			if string(r) == m[1] {
				ok = true
			}
		}
		if !ok {
			t.Errorf("rules.yml matches reason %q, not a label the metrics use", m[1])
		}
	}
}

// gathered lists the metric family names of reg.
func gathered(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		out = append(out, mf.GetName())
	}
	return out
}
