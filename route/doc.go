// Package route interprets the privacy events of package event: the routes
// from composed events to an (epsilon, delta) statement, the accountant of
// the DpEvent pattern of Google's dp_accounting.
//
// Curve builds the per-round Rényi-DP curve of an event under a named
// bound (Bounds lists those of its mechanism: the LDP bounds of package
// accounting, the proven and the conjectured shuffle Gaussian curves, the
// sampled Gaussian curve of package sampledgauss; DefaultOrders is the
// order grid). Epsilon and Account compose a list of events and convert to
// (epsilon, delta)-DP exactly as `shuffledp account` does (AccountCurves
// over curves already built). PLD accounts the events by their dominating
// pairs (package pld). Best is the minimum over every PROVEN route (RDP,
// the approximate-DP baselines of package approxdp, PLD), naming the
// winner; BestWith with best-conjecture is the opt-in minimum that admits
// the conjectured ICLR'23 Gaussian bounds (IsConjecture, IsBest).
// CertifiedInterval brackets the exact epsilon of the eps0-LDP shuffle
// mechanisms: a true lower bound beside the guarantee.
package route
