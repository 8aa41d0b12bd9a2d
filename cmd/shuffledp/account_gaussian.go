package main

// Help for the shuffle Gaussian mechanisms of `shuffledp account` (their
// events, bounds, order grids and the Thm 1 assumption are package
// event's; ICLR'23 submission "Shuffle Gaussian mechanism for differential
// privacy").

const gaussianAccountHelp = `
Shuffle Gaussian mechanisms (ICLR'23 submission "Shuffle Gaussian mechanism for
differential privacy"; --sigma is the noise multiplier in units of the L2
sensitivity; --eps0 is not used):
  shuffle-gaussian             all --n clients add N(0, sigma^2 I), reports shuffled
  subsampled-shuffle-gaussian  --k of --n clients sampled per round (no replacement)
  checkin-gaussian             each of --n clients checks in with probability --rate
Bounds (--bound; "all" shows every applicable one):
  iclr23-thm1    Thm 1, eq. (4), exact at every integer order (shuffle-gaussian)
  iclr23-thm2    Thm 2, eq. (10) (subsampled-shuffle-gaussian)
  iclr23-eq11    eq. (11) as a binomial mixture, a rigorous upper bound on it
                 (checkin-gaussian)
  iclr23-eq13    Thm 3, eq. (13), the Chernoff relaxation of eq. (11)
  gaussian-cor1  Cor. 1: lambda/(2 sigma^2), the Gaussian mechanism without
                 shuffling or sampling; valid for all three mechanisms and
                 needs no assumption
  best           (default) at every order the smaller of the mechanism's
                 bound above (thm1, thm2 or eq11) and gaussian-cor1
Default orders: every integer 2..4096 (the best order of Thm 1 sits just below a
sharp transition near 2 sigma^2 log n, between the points of a sparse grid); for
subsampled-shuffle-gaussian every integer 2..256, widened to every integer up to
4096 when the optimum is at 256; for checkin-gaussian every integer 2..256,
widened to the sparse grid up to 4096 when the optimum is at 256.
ASSUMPTION: Thm 1 is the Rényi divergence D_lambda(M(D')||M(D)) for the single
pair D=(0,...,0), D'=(1,0,...,0). The paper asserts, without a proof we could
check, that this pair and direction are the worst case over adjacent datasets.
Every epsilon of these mechanisms except gaussian-cor1 (and "best" when it is
won by gaussian-cor1) is only as strong as that claim.
Adjacency (--adjacency): the clients' gradients are clipped to l2 norm C and
sigma is in units of C.
  replace-one  (default) one client's gradient replaced by any other: the two
               are up to 2C apart, so every bound above is evaluated at
               sigma/2. Exact: translating every client's input by the same
               vector commutes with shuffling (an invertible post-processing),
               so the pair is the zero-out pair with sensitivity 2C.
  zero-out     one client's gradient replaced by zero (at most C apart): the
               bounds at sigma, the ICLR'23 paper's own convention (Thm 1's
               pair (0,...,0) vs (1,0,...,0)); use it to compare with the paper.
`

// Registered during package variable initialisation, before account.go's
// init builds the help text.
var _ = registerGaussianHelp()

func registerGaussianHelp() bool {
	accountHelp = append(accountHelp, gaussianAccountHelp)
	return true
}
