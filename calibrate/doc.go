// Package calibrate solves privacy calibration problems: given a target
// (epsilon, delta) and a mechanism whose epsilon is monotone in one
// parameter, find the parameter value that spends at most the target.
//
// The solvers bracket the answer (expanding geometrically), then shrink
// the bracket with the Illinois variant of regula falsi, falling back to
// bisection whenever it stalls, and always return the end of the bracket
// on the feasible side, whose epsilon was evaluated and is <= the target.
// So the returned value never exceeds the target even if the epsilon
// function is not monotone; monotonicity only matters for optimality.
//
//   - SmallestFeasible: epsilon non-increasing in x (noise sigma): the
//     smallest x with eps(x) <= target, up to a relative tolerance.
//   - LargestFeasible: epsilon non-decreasing in x (eps0): the largest x
//     with eps(x) <= target, up to a relative tolerance.
//   - LargestFeasibleInt: the same for integer parameters (steps, k),
//     exact.
package calibrate
