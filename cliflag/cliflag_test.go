package cliflag

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

type inner struct {
	Hidden string `flag:"secret,hidden" default:"s" usage:"not shown"`
	Plain  int    // no tag: not a flag
}

type every struct {
	inner
	Name  string        `flag:"name" default:"x" usage:"the FILE to read" metavar:"FILE"`
	On    bool          `flag:"on" default:"true" usage:"switch"`
	N     int           `flag:"n" default:"7" usage:"an int"`
	Big   int64         `flag:"big" default:"-3" usage:"an int64"`
	Seed  uint64        `flag:"seed" default:"9" usage:"a uint64"`
	X     float64       `flag:"x" default:"1e-5" usage:"a float"`
	Wait  time.Duration `flag:"wait" default:"2m" usage:"a duration"`
	List  []string      `flag:"item" usage:"repeatable"`
	Count int64         `flag:"count" kind:"count" default:"1e6" usage:"a count"`
	Frac  float64       `flag:"frac" kind:"fraction" default:"1/4" usage:"a fraction"`
	Sub   struct {
		Deep string `flag:"deep" usage:"in a nested struct"`
	}
	untagged string
}

// FlagUsage computes --n's usage.
func (*every) FlagUsage(name string) string {
	if name == "n" {
		return "computed"
	}
	return ""
}

func TestBindDefinesEveryTaggedField(t *testing.T) {
	var v every
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	if err := Bind(fs, &v); err != nil {
		t.Fatal(err)
	}
	want := every{inner: inner{Hidden: "s"}, Name: "x", On: true, N: 7, Big: -3, Seed: 9, X: 1e-5, Wait: 2 * time.Minute, Count: 1000000, Frac: 0.25}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("defaults: got %+v, want %+v", v, want)
	}
	for _, tc := range []struct{ name, typ, def, usage string }{
		{"name", "string", "x", "the `FILE` to read"},
		{"on", "bool", "true", "switch"},
		{"n", "int", "7", "computed"},
		{"big", "int64", "-3", "an int64"},
		{"seed", "uint64", "9", "a uint64"},
		{"x", "float64", "1e-05", "a float"},
		{"wait", "duration", "2m0s", "a duration"},
		{"item", "stringArray", "[]", "repeatable"},
		{"count", "int", "1000000", "a count"},
		{"frac", "float", "0.25", "a fraction"},
		{"deep", "string", "", "in a nested struct"},
		{"secret", "string", "s", "not shown"},
	} {
		fl := fs.Lookup(tc.name)
		if fl == nil {
			t.Errorf("--%s not defined", tc.name)
			continue
		}
		if got := fl.Value.Type(); got != tc.typ {
			t.Errorf("--%s: type %s, want %s", tc.name, got, tc.typ)
		}
		if fl.DefValue != tc.def || fl.Usage != tc.usage {
			t.Errorf("--%s: default %q usage %q, want %q %q", tc.name, fl.DefValue, fl.Usage, tc.def, tc.usage)
		}
		if fl.Hidden != (tc.name == "secret") {
			t.Errorf("--%s: hidden %v", tc.name, fl.Hidden)
		}
	}
	var n int
	fs.VisitAll(func(*pflag.Flag) { n++ })
	if n != 12 {
		t.Errorf("%d flags defined, want 12", n)
	}
	args := []string{"--name=y", "--on=false", "--n=8", "--big=4", "--seed=10", "--x=0.5", "--wait=3s",
		"--item=a,b", "--item=c", "--count=2e3", "--frac=1/8", "--deep=d", "--secret=t"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	want = every{inner: inner{Hidden: "t"}, Name: "y", N: 8, Big: 4, Seed: 10, X: 0.5, Wait: 3 * time.Second,
		List: []string{"a,b", "c"}, Count: 2000, Frac: 0.125}
	want.Sub.Deep = "d"
	if !reflect.DeepEqual(v, want) {
		t.Errorf("parsed: got %+v, want %+v", v, want)
	}
	if got := Args(fs, "secret", "item"); strings.Join(got, " ") != "--big=4 --count=2000 --deep=d --frac=0.125 --n=8 --name=y --on=false --seed=10 --wait=3s --x=0.5" {
		t.Errorf("Args: %q", got)
	}
	if m := Values(fs, "item"); len(m) != 11 || m["count"] != "2000" || m["secret"] != "t" {
		t.Errorf("Values: %v", m)
	}
}

func TestBindRefusesWhatItCannotHonour(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{every{}, "pointer to a struct"},
		{&struct {
			C complex128 `flag:"c"`
		}{}, "unsupported field type complex128"},
		{&struct {
			N int `flag:"n" default:"x"`
		}{}, `default "x"`},
		{&struct {
			N int `flag:"n" kind:"count"`
		}{}, "kind count needs an int64"},
		{&struct {
			F float64 `flag:"f" kind:"odd"`
		}{}, `unknown kind "odd"`},
		{&struct {
			A string `flag:"a"`
			B string `flag:"a"`
		}{}, "defined twice"},
		{&struct {
			A string `flag:"a,shown"`
		}{}, "bad flag tag"},
		{&struct {
			a string `flag:"a"`
		}{}, "not exported"},
		{&struct {
			A string `flag:"a" usage:"the dir" metavar:"DIR"`
		}{}, "metavar"},
	} {
		err := Bind(pflag.NewFlagSet("t", pflag.ContinueOnError), tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Bind(%T): error %v, want one containing %q", tc.v, err, tc.want)
		}
	}
}

func TestParseNumbers(t *testing.T) {
	for _, tc := range []struct {
		s     string
		frac  float64
		count int64
		fErr  bool
		cErr  bool
	}{
		{s: "3", frac: 3, count: 3},
		{s: "1e6", frac: 1e6, count: 1000000},
		{s: "1/4", frac: 0.25, cErr: true},
		{s: " 1 / 60000 ", frac: 1.0 / 60000, cErr: true},
		{s: "1/0", fErr: true, cErr: true},
		{s: "2.5", frac: 2.5, cErr: true},
		{s: "x", fErr: true, cErr: true},
		{s: "1e300", frac: 1e300, cErr: true},
	} {
		f, err := ParseFraction(tc.s)
		if (err != nil) != tc.fErr || (err == nil && f != tc.frac) {
			t.Errorf("ParseFraction(%q) = %g, %v", tc.s, f, err)
		}
		c, err := ParseCount(tc.s)
		if (err != nil) != tc.cErr || (err == nil && c != tc.count) {
			t.Errorf("ParseCount(%q) = %d, %v", tc.s, c, err)
		}
	}
}

func TestTarget(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	v := struct {
		A string `flag:"a" default:"1"`
	}{}
	MustBind(fs, &v)
	tg := Target{fs}
	if val, given, ok := tg.Given("a"); val != "1" || given || !ok {
		t.Errorf("Given(a) = %q %v %v", val, given, ok)
	}
	if _, _, ok := tg.Given("b"); ok {
		t.Error("Given(b): ok for a missing flag")
	}
	if err := tg.Set("a", "2"); err != nil || v.A != "2" {
		t.Errorf("Set: %v, A = %q", err, v.A)
	}
	if _, given, _ := tg.Given("a"); !given {
		t.Error("Given(a) after Set: not given")
	}
}

// Example binds an options struct's flags and parses a command line.
func ExampleBind() {
	var o struct {
		Eps0  float64 `flag:"eps0" default:"1.5" usage:"local DP parameter of the randomizer"`
		Delta float64 `flag:"delta" kind:"fraction" default:"1e-5" usage:"delta"`
		Dir   string  `flag:"data-dir" usage:"DIR holding the dataset" metavar:"DIR"`
	}
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	MustBind(fs, &o)
	if err := fs.Parse([]string{"--delta", "1/60000", "--data-dir", "data"}); err != nil {
		panic(err)
	}
	fmt.Printf("%g %.3g %s\n", o.Eps0, o.Delta, o.Dir)
	fmt.Print(fs.FlagUsages())
	// Output:
	// 1.5 1.67e-05 data
	//       --data-dir DIR   DIR holding the dataset
	//       --delta float    delta (default 1e-05)
	//       --eps0 float     local DP parameter of the randomizer (default 1.5)
}

func TestBindSkipsDash(t *testing.T) {
	var v struct {
		Skipped struct {
			A string `flag:"a"`
		} `flag:"-"`
		B string `flag:"b"`
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	MustBind(fs, &v)
	if fs.Lookup("a") != nil || fs.Lookup("b") == nil {
		t.Errorf("flag:\"-\" not skipped, or b not bound")
	}
}
