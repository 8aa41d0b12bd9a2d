package pki

import (
	"net"
	"testing"
)

// FuzzParseHosts: whatever ParseHosts accepts is an IP address or a DNS
// name of letters, digits, hyphens and dots, free of duplicates and of the
// built-in names, and parsing its output again gives the same output.
func FuzzParseHosts(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "x.example", "::ffff:10.0.0.1", "a..b", "10.0.0.1:80", "LOCALHOST", "-a", "0.0.0.0", "fe80::1%eth0"} {
		f.Add(s, "y.example")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		out, err := ParseHosts([]string{a, b})
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, h := range out {
			if net.ParseIP(h) == nil {
				for _, c := range h {
					if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
						t.Fatalf("accepted %q holding %q", h, c)
					}
				}
			}
			k := hostKey(h)
			if seen[k] || k == hostKey("localhost") || k == hostKey("127.0.0.1") || k == hostKey("::1") {
				t.Fatalf("accepted a duplicate or built-in host %q in %q", h, out)
			}
			seen[k] = true
		}
		again, err := ParseHosts(out)
		if err != nil || len(again) != len(out) {
			t.Fatalf("ParseHosts(%q) = %q, %v", out, again, err)
		}
		for i := range out {
			if again[i] != out[i] {
				t.Fatalf("not idempotent: %q then %q", out, again)
			}
		}
	})
}
