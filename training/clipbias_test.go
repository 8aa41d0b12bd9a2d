package training

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// clipBiasOracle computes metrics.ClipBias for logistic regression with
// weights w (classes x dim, row-major) and biases b directly from the
// formulas, independently of model and client: the gradient of example
// (x, y) is (softmax(Wx + b) - e_y) x^T then (softmax - e_y); the clip
// is written out for the clamp, the l_inf scaling and the l_2 clip.
func clipBiasOracle(w, b []float64, ds *data.Dataset, norm string, clip float64, clamp bool) metrics.ClipBias {
	k, dim := len(b), ds.Dim
	d := k*dim + k
	g, x := make([]float64, d), make([]float64, d)
	var clamped, clippedClients, sq float64
	for i := range ds.N {
		xi := ds.X[i*dim : (i+1)*dim]
		z := make([]float64, k)
		zmax := math.Inf(-1)
		for c := range k {
			z[c] = b[c]
			for j := range dim {
				z[c] += w[c*dim+j] * xi[j]
			}
			zmax = math.Max(zmax, z[c])
		}
		var s float64
		for c := range k {
			s += math.Exp(z[c] - zmax)
		}
		gi := make([]float64, d)
		for c := range k {
			p := math.Exp(z[c]-zmax) / s
			if c == ds.Y[i] {
				p--
			}
			for j := range dim {
				gi[c*dim+j] = p * xi[j]
			}
			gi[k*dim+c] = p
		}
		ci := make([]float64, d)
		var linf, l2 float64
		for _, v := range gi {
			linf = math.Max(linf, math.Abs(v))
			l2 += v * v
			if math.Abs(v) > clip {
				clamped++
			}
		}
		l2 = math.Sqrt(l2)
		for j, v := range gi {
			switch {
			case clamp:
				ci[j] = math.Max(-clip, math.Min(clip, v))
			case norm == protocol.NormLInf:
				ci[j] = v / math.Max(1, linf/clip)
			default:
				ci[j] = v / math.Max(1, l2/clip)
			}
		}
		changed := false
		for j := range gi {
			g[j] += gi[j]
			x[j] += ci[j]
			sq += ci[j] * ci[j]
			if math.Abs(ci[j]-gi[j]) > 1e-15*math.Abs(gi[j]) {
				changed = true
			}
		}
		if changed {
			clippedClients++
		}
	}
	n := float64(ds.N)
	var gg, xx, gx float64
	for j := range g {
		g[j] /= n
		x[j] /= n
		gg += g[j] * g[j]
		xx += x[j] * x[j]
		gx += g[j] * x[j]
	}
	cos := gx / math.Sqrt(gg*xx)
	// The centred vectors: minus the mean over classes of each input's
	// weights and of the biases, written out separately.
	cg, cx := make([]float64, d), make([]float64, d)
	for j := range dim {
		var sg, sx float64
		for c := range k {
			sg += g[c*dim+j]
			sx += x[c*dim+j]
		}
		for c := range k {
			cg[c*dim+j] = g[c*dim+j] - sg/float64(k)
			cx[c*dim+j] = x[c*dim+j] - sx/float64(k)
		}
	}
	var sgb, sxb float64
	for c := range k {
		sgb += g[k*dim+c]
		sxb += x[k*dim+c]
	}
	for c := range k {
		cg[k*dim+c] = g[k*dim+c] - sgb/float64(k)
		cx[k*dim+c] = x[k*dim+c] - sxb/float64(k)
	}
	var cgg, cxx, cgx float64
	for j := range cg {
		cgg += cg[j] * cg[j]
		cxx += cx[j] * cx[j]
		cgx += cg[j] * cx[j]
	}
	ccos, cnorm := cgx/math.Sqrt(cgg*cxx), math.Sqrt(cxx)
	return metrics.ClipBias{CentredCosine: &ccos, CentredNorm: &cnorm, Clients: ds.N, ClippedClients: clippedClients / n, ClampedCoordinates: clamped / n / float64(d),
		TrueNorm: math.Sqrt(gg), ClippedNorm: math.Sqrt(xx), Cosine: cos, Bias: math.Sqrt(math.Max(0, 1-cos*cos)),
		MeanClippedSq: sq / n}
}

func closeRel(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestMeasureClipBiasMatchesOracle: MeasureClipBias against the direct
// formulas of clipBiasOracle for the clamp, the l_inf scaling and the l_2
// clip at several radii, on 700 examples (three chunks, the last partial),
// at random parameters; with 1 and 3 workers bit for bit alike.
func TestMeasureClipBiasMatchesOracle(t *testing.T) {
	const dim, classes = 5, 3
	ds := blobs(700, dim, classes, 3, 4)
	m := newLogReg(t, dim, classes)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range m.Params() {
		m.Params()[i] = 0.3 * r.NormFloat64()
	}
	w, b := m.Params()[:classes*dim], m.Params()[classes*dim:]
	cases := []struct {
		name  string
		norm  string
		clip  float64
		clamp bool
	}{
		{"clamp tight", protocol.NormLInf, 0.05, true},
		{"clamp loose", protocol.NormLInf, 0.8, true},
		{"clamp never binds", protocol.NormLInf, 1e6, true},
		{"linf scale", protocol.NormLInf, 0.05, false},
		{"l2", protocol.NormL2, 0.5, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := MeasureClipBias(m, ds, ds.N, tc.norm, tc.clip, tc.clamp, 1)
			want := clipBiasOracle(w, b, ds, tc.norm, tc.clip, tc.clamp)
			if got.Clients != want.Clients || got.ClippedClients != want.ClippedClients ||
				got.ClampedCoordinates != want.ClampedCoordinates {
				t.Fatalf("counts: got %+v, want %+v", got, want)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"true_norm", got.TrueNorm, want.TrueNorm}, {"clipped_norm", got.ClippedNorm, want.ClippedNorm},
				{"cosine", got.Cosine, want.Cosine}, {"mean_clipped_sq", got.MeanClippedSq, want.MeanClippedSq},
			} {
				if !closeRel(f.got, f.want, 1e-11) {
					t.Errorf("%s = %.15g, want %.15g", f.name, f.got, f.want)
				}
			}
			if got.CentredCosine == nil || got.CentredNorm == nil || !closeRel(*got.CentredCosine, *want.CentredCosine, 1e-11) ||
				!closeRel(*got.CentredNorm, *want.CentredNorm, 1e-11) {
				t.Errorf("centred cosine, norm = %v, %v; want %g, %g", got.CentredCosine, got.CentredNorm, *want.CentredCosine, *want.CentredNorm)
			}
			if math.Abs(got.Bias-want.Bias) > 1e-6 { // sqrt(1 - cos^2) near cos = 1 magnifies rounding
				t.Errorf("bias = %g, want %g", got.Bias, want.Bias)
			}
			if par := MeasureClipBias(m, ds, ds.N, tc.norm, tc.clip, tc.clamp, 3); par.Cosine != got.Cosine ||
				par.TrueNorm != got.TrueNorm || par.ClippedNorm != got.ClippedNorm || *par.CentredCosine != *got.CentredCosine {
				t.Errorf("3 workers: %+v, 1 worker: %+v", par, got)
			}
		})
	}
	// The properties the oracle must show too: a clip that never binds
	// changes nothing; a tight clamp clamps and turns the mean.
	if free := MeasureClipBias(m, ds, ds.N, protocol.NormLInf, 1e6, true, 2); free.ClippedClients != 0 ||
		free.ClampedCoordinates != 0 || free.TrueNorm != free.ClippedNorm || !closeRel(free.Cosine, 1, 1e-14) {
		t.Errorf("a clip that never binds: %+v", free)
	}
	if tight := MeasureClipBias(m, ds, ds.N, protocol.NormLInf, 0.05, true, 2); !(tight.ClampedCoordinates > 0.5) ||
		!(tight.Cosine < 0.999) || !(tight.ClippedNorm < tight.TrueNorm) {
		t.Errorf("a tight clamp: %+v", tight)
	}
}

// TestClipDiagnosticChangesNoStep: a simulated R_inf run with
// --clip-diagnostic ends with the same parameters, bit for bit, as
// without it, and every evaluation record carries a ClipBias measured at
// that record's parameters over all clients, with R_inf's noise norm
// sqrt((M^2 - mean ||x_i||^2)/k); a networked configuration refuses the
// flag.
func TestClipDiagnosticChangesNoStep(t *testing.T) {
	train, test := blobs(600, 10, 4, 1, 1), blobs(200, 10, 4, 1, 2)
	cfg := baseConfig(t)
	cfg.Randomizer, cfg.ClipNorm, cfg.ClampLinf, cfg.Clip, cfg.Eps0, cfg.Epochs = RandomizerRInf, protocol.NormLInf, true, 0.05, 2, 2
	run := func(diag bool) ([]float64, []metrics.Record) {
		c := cfg
		c.ClipDiagnostic = diag
		m := newLogReg(t, 10, 4)
		tr, err := New(c, m, train, test)
		if err != nil {
			t.Fatal(err)
		}
		var recs []metrics.Record
		if _, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }}); err != nil {
			t.Fatal(err)
		}
		return m.Params(), recs
	}
	plain, plainRecs := run(false)
	diag, diagRecs := run(true)
	for i := range plain {
		if plain[i] != diag[i] {
			t.Fatalf("parameter %d: %v with the diagnostic, %v without", i, diag[i], plain[i])
		}
	}
	if len(diagRecs) != len(plainRecs) || len(diagRecs) < 2 {
		t.Fatalf("%d records with the diagnostic, %d without", len(diagRecs), len(plainRecs))
	}
	for _, r := range plainRecs {
		if r.ClipBias != nil {
			t.Fatalf("round %d: clip_bias without the diagnostic", r.Round)
		}
	}
	ri, err := randomizer.NewRInf(2, 44, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	last := diagRecs[len(diagRecs)-1].ClipBias
	at := newLogReg(t, 10, 4)
	copy(at.Params(), diag)
	want := MeasureClipBias(at, train, 600, protocol.NormLInf, 0.05, true, 1)
	if last == nil || last.Clients != 600 || last.Cosine != want.Cosine || last.TrueNorm != want.TrueNorm {
		t.Fatalf("last record's clip_bias %+v, want %+v", last, want)
	}
	noise := math.Sqrt((ri.Magnitude()*ri.Magnitude() - last.MeanClippedSq) / 60)
	if last.NoiseNorm == nil || !closeRel(*last.NoiseNorm, noise, 1e-14) {
		t.Errorf("noise_norm %v, want %g", last.NoiseNorm, noise)
	}
	if first := diagRecs[0].ClipBias; first == nil || first.Cosine == last.Cosine {
		t.Errorf("round 0's clip_bias %+v: not measured at its own parameters", first)
	}
	c := cfg
	c.ClipDiagnostic = true
	if err := c.CheckNetworked(); err == nil {
		t.Error("CheckNetworked accepted clip-diagnostic")
	}
}
