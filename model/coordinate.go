package model

// CoordinateWorker is a Worker that can compute one coordinate of the
// per-example gradient without the others. R_inf with the per-coordinate
// clamp reads one coordinate of the clipped gradient (randomizer.RInf,
// client.Client): a client then needs the forward pass and only the part of
// the backward pass that reaches that coordinate.
type CoordinateWorker interface {
	Worker
	// GradientCoordinate returns coordinate j of the gradient that
	// Gradient(x, label, grad) writes, bit for bit, and the loss Gradient
	// returns, bit for bit, with certified = true when it has proven that
	// every coordinate of that gradient is finite (no NaN, no ±Inf).
	// Otherwise certified is false, gj is meaningless, and a caller whose
	// result depends on the other coordinates (a clip that zeroes a vector
	// with a NaN entry) must call Gradient. j must be in [0, NumParams).
	GradientCoordinate(x []float64, label, j int) (gj, loss float64, certified bool)
}
