package accounting

// boundDescriptions holds one line per bound name of BoundNames, for help
// texts and error messages: what the bound is and where it comes from.
// Whether it is a lower bound (IsLower of its curve) and which mechanisms
// it applies to (NewBound) are not repeated here; help texts add them.
var boundDescriptions = map[string]string{
	BoundNeurIPS21Upper: "NeurIPS'21 Thm 1 (integer orders)",
	BoundNeurIPS21Lower: "NeurIPS'21 Thm 2, exact for binary RR",
	BoundCCS21Upper1:    "CCS'21 Thm 3.1 (at n := k for the subsampled mechanism)",
	BoundCCS21Upper2:    "CCS'21 Thm 3.3 (at n := k for the subsampled mechanism)",
	BoundCCS21Lower:     "CCS'21 Thm 3.4",
	BoundCCS21WBK19:     "CCS'21 Thm 3.1 at n := k, subsampled with WBK19 Thm 9",
	BoundPureDP:         "eps0-DP amplified by subsampling, as RDP",
	BoundClonesRDP:      "clone pair (FMT21) + advanced joint convexity, every eps0-LDP randomizer, real orders",
	BoundKRR3Lower:      "exact RDP of shuffled binary/3-ary RR",
	BoundBest:           "at every order the smallest valid upper bound",
}

// BoundDescription returns a one-line description of a bound of
// BoundNames, or "" for a name it does not know.
func BoundDescription(name string) string { return boundDescriptions[name] }
