package features

import (
	"fmt"
	"strconv"
	"strings"
)

// Default parameters of Parse("scatter"): Tramèr and Boneh's J = 2, L = 8
// on MNIST, the 7x7 grid of positions (8x8 on our 32x32 periodic plane)
// averaged to 2x2, GroupNorm over groups of 3 channels (27 groups, as
// Tramèr and Boneh), unit l2 norm: 324 features. On a validation split
// (docs/frontier.md) 3 channels per group beat 27 and 1, and the unit norm
// alone.
const (
	DefaultJ      = 2
	DefaultL      = 8
	DefaultPool   = 2
	DefaultNorm   = NormGroup
	DefaultGroups = 3
)

// Parse returns the extractor a --features value names for rows x cols
// images: "scatter" (the defaults above) or "scatter:KEY=VALUE,..." with
// keys j, l, pool, norm (none, unit, group) and groups. "" and "none" name
// no extractor (nil, nil).
func Parse(spec string, rows, cols int) (*Scatter, error) {
	if spec == "" || spec == "none" {
		return nil, nil
	}
	name, rest, _ := strings.Cut(spec, ":")
	if name != "scatter" {
		return nil, fmt.Errorf("features must be none or scatter[:KEY=VALUE,...], got %q", spec)
	}
	j, l, pool, norm, groups := DefaultJ, DefaultL, DefaultPool, DefaultNorm, DefaultGroups
	if rest != "" {
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("features: %q is not KEY=VALUE", kv)
			}
			if k == "norm" {
				norm = v
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("features: %s must be an integer, got %q", k, v)
			}
			switch k {
			case "j":
				j = n
			case "l":
				l = n
			case "pool":
				pool = n
			case "groups":
				groups = n
			default:
				return nil, fmt.Errorf("features: unknown key %q (j, l, pool, norm, groups)", k)
			}
		}
	}
	return NewScatter(rows, cols, j, l, pool, norm, groups)
}
