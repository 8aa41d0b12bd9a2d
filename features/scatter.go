// Package features provides fixed, data-independent feature extractors that
// each client applies to its own example before computing a gradient: the
// scattering transform of Mallat ("Group invariant scattering", CPAM 2012;
// Bruna and Mallat, "Invariant scattering convolution networks", TPAMI 2013)
// as Tramèr and Boneh use it for private learning ("Differentially private
// learning needs better features (or much more data)", ICLR 2021,
// Section 3: ScatterNet with J = 2 and L = 8 on MNIST, 81 channels).
//
// Privacy: the transform has no parameter learned from data (its filters are
// fixed functions of J, L and the grid), and it maps each example to its
// features alone. A training set transformed example by example therefore
// differs in one example exactly when the raw training set does, and any
// randomizer applied to gradients computed on the features is as private as
// on raw pixels: the features cost no privacy. The same holds for the
// normalisation below, which uses the one example's own values only.
// Computing the transform once for a whole data set (Dataset, Cached) is
// the same computation as every client computing it on its own example.
package features

import (
	"fmt"
	"math"
)

// Norms accepted by Scatter.Norm.
const (
	// NormNone leaves the pooled coefficients as they are.
	NormNone = "none"
	// NormUnit divides the example's feature vector by its l2 norm.
	NormUnit = "unit"
	// NormGroup standardises each group of Scatter.Groups consecutive
	// channels of the example to mean 0 and variance 1 over the group's
	// values (GroupNorm without learned affine parameters; Wu and He, ECCV
	// 2018, as Tramèr and Boneh apply it to scattering features), then
	// divides the whole vector by its l2 norm.
	NormGroup = "group"
)

// Scatter is the two-layer 2-D scattering transform with Morlet wavelets at
// J scales and L orientations of a one-channel rows x cols image:
//
//	S0 x        = (x * phi_J)(2^J u)
//	S1 x[j,l]   = (|x * psi_{j,l}| * phi_J)(2^J u)                     j < J
//	S2 x[j1,l1,j2,l2] = (||x * psi_{j1,l1}| * psi_{j2,l2}| * phi_J)(2^J u)  j1 < j2 < J
//
// (Bruna and Mallat 2013, eq. (11)-(12)) on a periodic Grid x Grid plane
// into which the image is zero-padded (centred). This gives
// 1 + J L + L^2 J(J-1)/2 channels (81 for J = 2, L = 8) of
// (Grid/2^J)^2 positions each; the positions are then averaged in
// Pool x Pool blocks of equal size, and the vector normalised per Norm.
//
// Filters (as in Kymatio's Morlet bank; Andreux et al., JMLR 2020): psi_{j,l}
// is the Morlet wavelet with envelope width sigma = 0.8 2^j, centre
// frequency xi = 3 pi / (4 2^j), orientation theta_l = (L/2 - 1 - l) pi / L
// and slant 4/L; phi_J is the Gaussian of width 0.8 2^(J-1) with unit sum.
// Each is sampled on the grid and periodised. The convolutions are computed
// with the FFT; the subsampling by 2^J by periodising the spectrum.
type Scatter struct {
	Rows, Cols int    // input image size
	J, L       int    // scales and orientations
	Grid       int    // side of the periodic plane (a power of two)
	Pool       int    // output positions per side after average pooling; divides Grid/2^J
	Norm       string // NormNone, NormUnit or NormGroup
	Groups     int    // channels per group of NormGroup

	side     int // Grid / 2^J
	channels int
	fft      *fft
	small    *fft
	psi      [][]complex128 // psi[j*L+l]: Fourier transform of psi_{j,l}
	phi      []complex128   // Fourier transform of phi_J
	lowK     []float64      // lowK[o*Grid+v] = phi1((o 2^J - v) mod Grid), phi_J = phi1 (x) phi1
}

// NewScatter returns the scattering transform of rows x cols images with J
// scales and L orientations, pooled to pool x pool positions and normalised
// per norm (groups channels per group for NormGroup). The grid is the
// smallest power of two at least max(rows, cols) + 2^J.
func NewScatter(rows, cols, j, l, pool int, norm string, groups int) (*Scatter, error) {
	if rows < 1 || cols < 1 {
		return nil, fmt.Errorf("features: image size must be positive, got %dx%d", rows, cols)
	}
	if j < 1 || j > 4 {
		return nil, fmt.Errorf("features: J must be in [1, 4], got %d", j)
	}
	if l < 1 || l > 16 {
		return nil, fmt.Errorf("features: L must be in [1, 16], got %d", l)
	}
	grid := 1
	for grid < max(rows, cols)+1<<j {
		grid <<= 1
	}
	s := &Scatter{Rows: rows, Cols: cols, J: j, L: l, Grid: grid, Pool: pool, Norm: norm, Groups: groups,
		side: grid >> j, channels: 1 + j*l + l*l*j*(j-1)/2}
	if pool < 1 || s.side%pool != 0 {
		return nil, fmt.Errorf("features: pool must divide %d (the %dx%d grid subsampled by 2^J), got %d", s.side, grid, grid, pool)
	}
	switch norm {
	case NormNone, NormUnit:
	case NormGroup:
		if groups < 1 || s.channels%groups != 0 {
			return nil, fmt.Errorf("features: groups must divide the %d channels, got %d", s.channels, groups)
		}
	default:
		return nil, fmt.Errorf("features: norm must be %s, %s or %s, got %q", NormNone, NormUnit, NormGroup, norm)
	}
	var err error
	if s.fft, err = newFFT(grid); err != nil {
		return nil, err
	}
	if s.small, err = newFFT(s.side); err != nil {
		return nil, err
	}
	col := make([]complex128, grid)
	for _, f := range s.spatialFilters() {
		s.psi = append(s.psi, f)
	}
	s.phi = s.psi[len(s.psi)-1]
	s.psi = s.psi[:len(s.psi)-1]
	// phi_J (slant 1, xi 0) is the product of two periodised 1-D Gaussians,
	// so its convolution is separable; phi1 is its first row over its
	// first entry (the sums of the two factors are equal).
	s.lowK = make([]float64, s.side*grid)
	for o := range s.side {
		for v := range grid {
			s.lowK[o*grid+v] = real(s.phi[(o<<j-v+grid)%grid]) / math.Sqrt(real(s.phi[0]))
		}
	}
	for _, f := range append(s.psi, s.phi) {
		s.fft.transform2(f, col, false)
	}
	return s, nil
}

// Name identifies the transform and every parameter of it (the cache key
// of Cached includes it).
func (s *Scatter) Name() string {
	return fmt.Sprintf("scatter-v1-%dx%d-J%d-L%d-grid%d-pool%d-%s%d", s.Rows, s.Cols, s.J, s.L, s.Grid, s.Pool, s.Norm, s.Groups)
}

// InputDim is rows*cols.
func (s *Scatter) InputDim() int { return s.Rows * s.Cols }

// Channels is 1 + J L + L^2 J(J-1)/2.
func (s *Scatter) Channels() int { return s.channels }

// Dim is the length of the feature vector: Channels * Pool^2.
func (s *Scatter) Dim() int { return s.channels * s.Pool * s.Pool }

// spatialFilters returns the J*L wavelets psi_{j,l} (index j*L+l) and then
// phi_J, sampled on the periodic grid (row-major, coordinates centred at
// index 0 and periodised over the neighbouring copies of the plane).
func (s *Scatter) spatialFilters() [][]complex128 {
	var out [][]complex128
	for j := range s.J {
		for l := range s.L {
			theta := float64(s.L/2-1-l) * math.Pi / float64(s.L)
			sigma := 0.8 * math.Exp2(float64(j))
			xi := 3 * math.Pi / 4 / math.Exp2(float64(j))
			out = append(out, s.morlet(sigma, theta, xi, 4/float64(s.L)))
		}
	}
	phi := s.gabor(0.8*math.Exp2(float64(s.J-1)), 0, 0, 1)
	var sum complex128
	for _, v := range phi {
		sum += v
	}
	for i := range phi {
		phi[i] /= sum
	}
	return append(out, phi)
}

// gabor samples exp(-(x'^2 + slant^2 y'^2) / (2 sigma^2)) exp(i xi x') /
// (2 pi sigma^2 / slant), (x', y') the coordinates rotated by -theta,
// periodised on the grid.
func (s *Scatter) gabor(sigma, theta, xi, slant float64) []complex128 {
	n := s.Grid
	out := make([]complex128, n*n)
	sin, cos := math.Sincos(theta)
	norm := 1 / (2 * math.Pi * sigma * sigma / slant)
	for r := range n {
		for c := range n {
			var v complex128
			for kr := -2; kr <= 2; kr++ {
				for kc := -2; kc <= 2; kc++ {
					y, x := float64(r+kr*n), float64(c+kc*n)
					xr, yr := cos*x+sin*y, -sin*x+cos*y
					e := math.Exp(-(xr*xr + slant*slant*yr*yr) / (2 * sigma * sigma))
					ps, pc := math.Sincos(xi * xr)
					v += complex(e*pc, e*ps)
				}
			}
			out[r*n+c] = v * complex(norm, 0)
		}
	}
	return out
}

// morlet is gabor(sigma, theta, xi, slant) minus the multiple of its
// envelope that makes its sum zero (a wavelet has no DC response).
func (s *Scatter) morlet(sigma, theta, xi, slant float64) []complex128 {
	g := s.gabor(sigma, theta, xi, slant)
	env := s.gabor(sigma, theta, 0, slant)
	var sg, se complex128
	for i := range g {
		sg += g[i]
		se += env[i]
	}
	k := sg / se
	for i := range g {
		g[i] -= k * env[i]
	}
	return g
}

// Worker holds the scratch space of one goroutine; Transform is not safe
// for concurrent use on one Worker, distinct Workers are.
type Worker struct {
	s                *Scatter
	x, u1, u2, t, sm []complex128
	col, smCol       []complex128
	raw, re, rows    []float64
}

// NewWorker returns scratch space for Transform.
func (s *Scatter) NewWorker() *Worker {
	g := s.Grid * s.Grid
	return &Worker{s: s, x: make([]complex128, g), u1: make([]complex128, g), u2: make([]complex128, g),
		t: make([]complex128, g), sm: make([]complex128, s.side*s.side),
		col: make([]complex128, s.Grid), smCol: make([]complex128, s.side),
		raw: make([]float64, s.channels*s.side*s.side), re: make([]float64, g), rows: make([]float64, s.Grid*s.side)}
}

// Transform writes the features of the image img (Rows*Cols values,
// row-major) into out (Dim values).
func (w *Worker) Transform(img, out []float64) {
	s := w.s
	if len(img) != s.InputDim() || len(out) != s.Dim() {
		panic(fmt.Sprintf("features: Transform needs %d inputs and %d outputs, got %d and %d", s.InputDim(), s.Dim(), len(img), len(out)))
	}
	w.scatter(img)
	s.poolAndNormalise(w.raw, out)
}

// scatter writes the unpooled coefficients, channel-major (channel, then
// side x side positions), into w.raw: channel 0 is S0, then S1 in (j, l)
// order, then S2 in (j1, l1, j2, l2) order.
func (w *Worker) scatter(img []float64) {
	s, n := w.s, w.s.Grid
	clear(w.x)
	r0, c0 := (n-s.Rows)/2, (n-s.Cols)/2
	for r := range s.Rows {
		for c := range s.Cols {
			w.x[(r+r0)*n+c+c0] = complex(img[r*s.Cols+c], 0)
		}
	}
	s.fft.transform2(w.x, w.col, false)
	clear(w.re)
	for r := range s.Rows {
		copy(w.re[(r+r0)*n+c0:], img[r*s.Cols:(r+1)*s.Cols])
	}
	ch := 0
	w.lowpass(w.re, ch)
	ch++
	// S1 channels come before S2 channels; S2 of (j1, l1) are written as
	// U1 of (j1, l1) is at hand.
	ch2 := 1 + s.J*s.L
	for j1 := range s.J {
		for l1 := range s.L {
			w.modulus(w.x, s.psi[j1*s.L+l1]) // w.re = |x * psi_{j1,l1}|
			w.lowpass(w.re, ch)
			ch++
			if j1+1 == s.J {
				continue
			}
			for i, v := range w.re {
				w.u1[i] = complex(v, 0)
			}
			s.fft.transform2(w.u1, w.col, false)
			for j2 := j1 + 1; j2 < s.J; j2++ {
				for l2 := range s.L {
					w.modulus(w.u1, s.psi[j2*s.L+l2])
					w.lowpass(w.re, ch2)
					ch2++
				}
			}
		}
	}
}

// modulus sets w.re to |IFFT(src * filter)|.
func (w *Worker) modulus(src, filter []complex128) {
	s, dst := w.s, w.u2
	inv := 1 / float64(s.Grid*s.Grid)
	for i := range dst {
		dst[i] = src[i] * filter[i]
	}
	s.fft.transform2(dst, w.col, true)
	for i, v := range dst {
		w.re[i] = math.Sqrt(real(v)*real(v)+imag(v)*imag(v)) * inv
	}
}

// lowpass writes (u * phi_J) at every 2^J-th position of the grid into
// channel ch of w.raw: the periodic convolution with the separable phi_J,
// first along rows, then along columns, computed only at the kept
// positions.
func (w *Worker) lowpass(u []float64, ch int) {
	s, n, m := w.s, w.s.Grid, w.s.side
	for r := range n {
		row := u[r*n : (r+1)*n]
		for oc := range m {
			k := s.lowK[oc*n : (oc+1)*n]
			var sum float64
			for v, x := range row {
				sum += x * k[v]
			}
			w.rows[oc*n+r] = sum
		}
	}
	dst := w.raw[ch*m*m : (ch+1)*m*m]
	for or := range m {
		k := s.lowK[or*n : (or+1)*n]
		for oc := range m {
			col := w.rows[oc*n : (oc+1)*n]
			var sum float64
			for r, x := range col {
				sum += x * k[r]
			}
			dst[or*m+oc] = sum
		}
	}
}

// poolAndNormalise averages each channel's side x side positions in
// Pool x Pool blocks and applies the normalisation.
func (s *Scatter) poolAndNormalise(raw, out []float64) {
	m, p := s.side, s.Pool
	b := m / p
	area := float64(b * b)
	for ch := range s.channels {
		src := raw[ch*m*m : (ch+1)*m*m]
		dst := out[ch*p*p : (ch+1)*p*p]
		for pr := range p {
			for pc := range p {
				var sum float64
				for r := pr * b; r < (pr+1)*b; r++ {
					for c := pc * b; c < (pc+1)*b; c++ {
						sum += src[r*m+c]
					}
				}
				dst[pr*p+pc] = sum / area
			}
		}
	}
	switch s.Norm {
	case NormGroup:
		size := s.Groups * p * p
		for g := 0; g < len(out); g += size {
			standardise(out[g : g+size])
		}
		unit(out)
	case NormUnit:
		unit(out)
	}
}

// standardise shifts and scales v to mean 0 and variance 1 (a constant v
// becomes 0).
func standardise(v []float64) {
	var mean float64
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(v)))
	for i, x := range v {
		if sd > 1e-12 {
			v[i] = (x - mean) / sd
		} else {
			v[i] = 0
		}
	}
}

// unit scales v to l2 norm 1 (a zero v stays zero).
func unit(v []float64) {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	if ss == 0 {
		return
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] *= inv
	}
}
