package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/randomizer"
)

// TestAuditDimLimit checks the documented upper limit on --dim for the
// exact audits (their time and memory grow with the dimension), and that the
// analytic audits, which cost nothing per dimension, are not limited.
func TestAuditDimLimit(t *testing.T) {
	over := fmt.Sprint(randomizer.MaxAuditDim + 1)
	for _, name := range []string{"krr", "rinf", "r1"} {
		for _, dim := range []string{over, "1000000000"} {
			_, err := runCmd(t, newAuditCmd, "--randomizer", name, "--eps0", "1", "--dim", dim)
			if err == nil || !strings.Contains(err.Error(), "--dim") || !strings.Contains(err.Error(), fmt.Sprint(randomizer.MaxAuditDim)) {
				t.Errorf("%s --dim %s: error %v, want one naming --dim and the limit %d", name, dim, err, randomizer.MaxAuditDim)
			}
		}
	}
	if _, err := runCmd(t, newAuditCmd, "--randomizer", "r2", "--eps0", "1", "--dim", over); err != nil {
		t.Errorf("analytic audit of r2 at --dim %s: %v", over, err)
	}
	help, err := runCmd(t, newAuditCmd, "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(help, fmt.Sprintf("<= %d", randomizer.MaxAuditDim)) {
		t.Errorf("--help does not state the --dim limit %d:\n%s", randomizer.MaxAuditDim, help)
	}
}
