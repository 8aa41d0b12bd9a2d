package randomizer

import "fmt"

// NewR2 will return R_2 = Quan∘Priv of Girgis et al.; NOT IMPLEMENTED YET.
func NewR2(eps0 float64, d int, a float64) (Randomizer, error) {
	return nil, fmt.Errorf("randomizer r2 is not implemented yet")
}
