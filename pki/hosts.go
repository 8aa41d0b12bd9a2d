package pki

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

// builtinHosts are the subject alternative names every server and shuffler
// certificate carries, whatever --hosts says.
var builtinHosts = []string{"127.0.0.1", "::1", "localhost"}

// ParseHosts checks the host names and IP addresses a deployment's server
// and shuffler certificates are issued for (pki init --hosts) and returns
// them normalised (IP addresses in their canonical form, DNS names in lower
// case). A malformed entry (an empty one, a host:port, a URL, a name that is
// not a DNS name of letters, digits and hyphens in labels of 1 to 63
// characters), an entry given twice (IP addresses compared as addresses, so
// ::ffff:10.0.0.1 repeats 10.0.0.1) and a loopback name that is always
// included are refused, each with an error naming it.
func ParseHosts(hosts []string) ([]string, error) {
	var out []string
	seen := map[string]string{}
	for _, b := range builtinHosts {
		seen[hostKey(b)] = b
	}
	for _, h := range hosts {
		n, err := parseHost(h)
		if err != nil {
			return nil, err
		}
		k := hostKey(n)
		if prev, dup := seen[k]; dup {
			if slices.Contains(builtinHosts, prev) {
				return nil, fmt.Errorf("hosts: %q is always included (with 127.0.0.1, ::1 and localhost); remove it", h)
			}
			return nil, fmt.Errorf("hosts: %q given twice (as %q and %q): duplicate subject alternative names are refused", n, prev, h)
		}
		seen[k] = h
		out = append(out, n)
	}
	return out, nil
}

// hostKey identifies a host for duplicate detection.
func hostKey(h string) string {
	if ip := net.ParseIP(h); ip != nil {
		if v4 := ip.To4(); v4 != nil {
			return "ip:" + v4.String()
		}
		return "ip:" + ip.String()
	}
	return "dns:" + strings.ToLower(h)
}

// parseHost checks one entry.
func parseHost(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("hosts: an empty entry (two commas, or a trailing comma); give host names or IP addresses separated by commas")
	}
	if strings.TrimSpace(h) != h {
		return "", fmt.Errorf("hosts: %q has leading or trailing spaces", h)
	}
	if ip := net.ParseIP(h); ip != nil {
		if ip.IsUnspecified() {
			return "", fmt.Errorf("hosts: %q is the unspecified address; give the address clients dial", h)
		}
		if v4 := ip.To4(); v4 != nil {
			return v4.String(), nil
		}
		return ip.String(), nil
	}
	if strings.Contains(h, "://") {
		return "", fmt.Errorf("hosts: %q is a URL; give a host name or an IP address", h)
	}
	if _, _, err := net.SplitHostPort(h); err == nil || strings.Contains(h, ":") {
		return "", fmt.Errorf("hosts: %q holds a colon (a host:port or a malformed IPv6 address); give a host name or an IP address without a port", h)
	}
	if len(h) > 253 {
		return "", fmt.Errorf("hosts: %q has %d characters, a DNS name at most 253", h, len(h))
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if err := checkLabel(label); err != nil {
			return "", fmt.Errorf("hosts: %q is neither an IP address nor a DNS name: %v", h, err)
		}
	}
	if allDigitsAndDots(h) {
		return "", fmt.Errorf("hosts: %q is neither an IP address nor a DNS name (all-numeric)", h)
	}
	return strings.ToLower(strings.TrimSuffix(h, ".")), nil
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return fmt.Errorf("an empty label")
	case len(l) > 63:
		return fmt.Errorf("label %q longer than 63 characters", l)
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for _, c := range l {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("label %q holds %q (letters, digits and hyphens only)", l, c)
		}
	}
	return nil
}

func allDigitsAndDots(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.') {
			return false
		}
	}
	return true
}

// sans returns the IP addresses and DNS names of the checked hosts, with the
// loopback addresses and localhost first.
func sans(hosts []string) ([]net.IP, []string) {
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	names := []string{"localhost"}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, h)
		}
	}
	return ips, names
}

// certHosts returns the hosts of a certificate beyond the built-in ones,
// normalised as ParseHosts does, sorted.
func certHosts(ips []net.IP, names []string) []string {
	var out []string
	for _, ip := range ips {
		s := ip.String()
		if v4 := ip.To4(); v4 != nil {
			s = v4.String()
		}
		if !slices.Contains(builtinHosts, s) {
			out = append(out, s)
		}
	}
	for _, n := range names {
		if !slices.Contains(builtinHosts, n) {
			out = append(out, strings.ToLower(n))
		}
	}
	slices.Sort(out)
	return out
}
