package pki_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/pki"
)

// Each role's certificate names it; the listeners accept these callers.
func ExampleIdentity() {
	for _, r := range pki.Roles {
		fmt.Println(pki.Identity("mnist-prod", r), "called by", pki.Callers[r])
	}
	// Output:
	// spiffe://mnist-prod/server called by [shuffler client]
	// spiffe://mnist-prod/shuffler called by [client]
	// spiffe://mnist-prod/client called by []
}

func ExampleParseHosts() {
	hosts, err := pki.ParseHosts([]string{"10.0.0.3", "Shuffler.Example."})
	fmt.Println(hosts, err)
	_, err = pki.ParseHosts([]string{"10.0.0.3:7060"})
	fmt.Println(err)
	// Output:
	// [10.0.0.3 shuffler.example] <nil>
	// hosts: "10.0.0.3:7060" holds a colon (a host:port or a malformed IPv6 address); give a host name or an IP address without a port
}
