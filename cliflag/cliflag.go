// Package cliflag binds the fields of an options struct to a pflag.FlagSet
// from the fields' struct tags, so that the struct a library takes is the
// single source of truth for its command-line flags: each flag's name,
// default, help text and visibility are written once, beside the field,
// and any front end (the shuffledp command, a test, another tool) binds
// the same flags with Bind.
//
// A field is a flag when it has a flag tag; these tags are read:
//
//	flag:"NAME"            the flag's name; flag:"NAME,hidden" hides it from help
//	default:"VALUE"        its default, parsed as the field's kind (absent: the
//	                       field's value when Bind is called, usually zero)
//	usage:"TEXT"           its help text
//	metavar:"WORD"         the name of its value in help: the first WORD of the
//	                       usage is shown as the value's name (pflag's `WORD`
//	                       quoting, which a struct tag cannot hold)
//	kind:"count"           an int64 that also accepts exact float notation (1e6)
//	kind:"fraction"        a float64 that also accepts a quotient a/b (1/60000)
//
// The field kinds bound are string, bool, int, int64, uint64, float64,
// time.Duration and []string (a repeatable flag: pflag's StringArray, no
// comma splitting). A struct-typed field without a flag tag (embedded or
// not) is walked for flags of its own, unless tagged flag:"-"; fields
// without tags are left alone.
// A struct whose usage text is computed (a list of valid names, a
// constant of another package) implements Usager.
package cliflag

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Usager is implemented by an options struct some of whose usage texts are
// computed: FlagUsage returns the usage of the named flag, or "" to keep
// its tag's. Bind asks every struct it walks, for the flags of its own
// fields.
type Usager interface {
	FlagUsage(name string) string
}

// Bind defines a flag on fs for every tagged field of the struct v points
// to (see the package comment), sets each field to its default and binds
// it, so that parsing fs fills the struct. It returns an error naming the
// field for a tag it cannot honour: an unsupported field kind, a default
// that does not parse, a flag fs already has.
func Bind(fs *pflag.FlagSet, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("cliflag: Bind needs a pointer to a struct, got %T", v)
	}
	return bindStruct(fs, rv.Elem())
}

// MustBind is Bind for flags defined by the program itself, whose tags are
// fixed at compile time: it panics on an error.
func MustBind(fs *pflag.FlagSet, v any) {
	if err := Bind(fs, v); err != nil {
		panic(err)
	}
}

var durationType = reflect.TypeFor[time.Duration]()

func bindStruct(fs *pflag.FlagSet, sv reflect.Value) error {
	st := sv.Type()
	var usager Usager
	if sv.Addr().CanInterface() {
		usager, _ = sv.Addr().Interface().(Usager)
	}
	for i := range st.NumField() {
		sf := st.Field(i)
		tag, tagged := sf.Tag.Lookup("flag")
		if tag == "-" {
			continue
		}
		if !tagged {
			if sf.Type.Kind() == reflect.Struct && (sf.IsExported() || sf.Anonymous) {
				if err := bindStruct(fs, sv.Field(i)); err != nil {
					return err
				}
			}
			continue
		}
		if !sf.IsExported() {
			return fmt.Errorf("cliflag: field %s.%s is not exported", st.Name(), sf.Name)
		}
		name, opt, _ := strings.Cut(tag, ",")
		if name == "" || (opt != "" && opt != "hidden") {
			return fmt.Errorf("cliflag: field %s.%s: bad flag tag %q", st.Name(), sf.Name, tag)
		}
		if fs.Lookup(name) != nil {
			return fmt.Errorf("cliflag: field %s.%s: flag --%s defined twice", st.Name(), sf.Name, name)
		}
		usage := sf.Tag.Get("usage")
		if usager != nil {
			if u := usager.FlagUsage(name); u != "" {
				usage = u
			}
		}
		if meta := sf.Tag.Get("metavar"); meta != "" {
			if !strings.Contains(usage, meta) {
				return fmt.Errorf("cliflag: field %s.%s: usage does not name its metavar %q", st.Name(), sf.Name, meta)
			}
			usage = strings.Replace(usage, meta, "`"+meta+"`", 1)
		}
		fv := sv.Field(i)
		if def, ok := sf.Tag.Lookup("default"); ok {
			if err := set(fv, sf.Tag.Get("kind"), def); err != nil {
				return fmt.Errorf("cliflag: field %s.%s: default %q: %w", st.Name(), sf.Name, def, err)
			}
		}
		if err := define(fs, fv, name, sf.Tag.Get("kind"), usage); err != nil {
			return fmt.Errorf("cliflag: field %s.%s: %w", st.Name(), sf.Name, err)
		}
		if opt == "hidden" {
			if err := fs.MarkHidden(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// define defines the flag of the field fv, whose value is its default.
func define(fs *pflag.FlagSet, fv reflect.Value, name, kind, usage string) error {
	p := fv.Addr().Interface()
	switch kind {
	case "count":
		v, ok := p.(*int64)
		if !ok {
			return fmt.Errorf("kind count needs an int64 field, got %s", fv.Type())
		}
		fs.Var(countValue{v}, name, usage)
		return nil
	case "fraction":
		v, ok := p.(*float64)
		if !ok {
			return fmt.Errorf("kind fraction needs a float64 field, got %s", fv.Type())
		}
		fs.Var(fractionValue{v}, name, usage)
		return nil
	case "":
	default:
		return fmt.Errorf("unknown kind %q", kind)
	}
	switch v := p.(type) {
	case *string:
		fs.StringVar(v, name, *v, usage)
	case *bool:
		fs.BoolVar(v, name, *v, usage)
	case *int:
		fs.IntVar(v, name, *v, usage)
	case *int64:
		fs.Int64Var(v, name, *v, usage)
	case *uint64:
		fs.Uint64Var(v, name, *v, usage)
	case *float64:
		fs.Float64Var(v, name, *v, usage)
	case *time.Duration:
		fs.DurationVar(v, name, *v, usage)
	case *[]string:
		fs.StringArrayVar(v, name, *v, usage)
	default:
		return fmt.Errorf("unsupported field type %s", fv.Type())
	}
	return nil
}

// set parses s into the field fv (a default tag).
func set(fv reflect.Value, kind, s string) error {
	switch kind {
	case "count":
		if fv.Kind() != reflect.Int64 {
			return fmt.Errorf("kind count needs an int64 field, got %s", fv.Type())
		}
		return countValue{fv.Addr().Interface().(*int64)}.Set(s)
	case "fraction":
		if fv.Kind() != reflect.Float64 {
			return fmt.Errorf("kind fraction needs a float64 field, got %s", fv.Type())
		}
		return fractionValue{fv.Addr().Interface().(*float64)}.Set(s)
	}
	if fv.Type() == durationType {
		d, err := time.ParseDuration(s)
		fv.SetInt(int64(d))
		return err
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		fv.SetBool(b)
		return err
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(s, 0, fv.Type().Bits())
		fv.SetInt(i)
		return err
	case reflect.Uint64:
		u, err := strconv.ParseUint(s, 0, 64)
		fv.SetUint(u)
		return err
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		fv.SetFloat(f)
		return err
	default:
		return fmt.Errorf("no default for a field of type %s", fv.Type())
	}
	return nil
}

// ParseFraction parses a number or a quotient "a/b" (b nonzero), such as
// a delta of 1/60000 (delta = 1/n is common).
func ParseFraction(s string) (float64, error) {
	num, den, isFrac := strings.Cut(s, "/")
	a, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return 0, fmt.Errorf("not a number or a quotient a/b: %q", s)
	}
	if isFrac {
		b, err := strconv.ParseFloat(strings.TrimSpace(den), 64)
		if err != nil || b == 0 {
			return 0, fmt.Errorf("not a number or a quotient a/b: %q", s)
		}
		a /= b
	}
	return a, nil
}

// ParseCount parses an integer, also in exact float notation such as 1e6.
func ParseCount(s string) (int64, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || math.Abs(x) > 1<<62 {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return int64(x), nil
}

// fractionValue is the pflag.Value of kind fraction.
type fractionValue struct{ v *float64 }

func (f fractionValue) String() string { return strconv.FormatFloat(*f.v, 'g', -1, 64) }
func (f fractionValue) Type() string   { return "float" }
func (f fractionValue) Set(s string) error {
	a, err := ParseFraction(s)
	if err != nil {
		return err
	}
	*f.v = a
	return nil
}

// countValue is the pflag.Value of kind count.
type countValue struct{ v *int64 }

func (f countValue) String() string { return strconv.FormatInt(*f.v, 10) }
func (f countValue) Type() string   { return "int" }
func (f countValue) Set(s string) error {
	i, err := ParseCount(s)
	if err != nil {
		return err
	}
	*f.v = i
	return nil
}
