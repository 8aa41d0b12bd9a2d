package shufflegauss

import "testing"

// BenchmarkShuffleOrder2000 is the performance goal: eps(2000) at
// n = 60000 from a cold cache (the recurrence over orders 1..2000).
func BenchmarkShuffleOrder2000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, _ := NewShuffle(9.48, 60000)
		if _, err := s.RDP(2000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShuffleOrders2to4096 evaluates every integer order 2..4096 from a
// cold cache: one recurrence up to 4096, not one per order.
func BenchmarkShuffleOrders2to4096(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, _ := NewShuffle(9.48, 60000)
		for o := 2; o <= 4096; o++ {
			if _, err := s.RDP(float64(o)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkShuffleSmallN4096 is the n < lambda path (binary powering) for
// n = 1000 up to order 4096.
func BenchmarkShuffleSmallN4096(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, _ := NewShuffle(2, 1000)
		if _, err := s.RDP(4096); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckInOrders2to64 is eq. (11) at the paper's distributed
// learning setting (n = 60000, rate 0.1, sigma 5), orders 2..64.
func BenchmarkCheckInOrders2to64(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c, _ := NewCheckIn(5, 60000, 0.1, CheckInMixture)
		for o := 2; o <= 64; o++ {
			if _, err := c.RDP(float64(o)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSubsampledOrders2to4096 is eq. (10) at every integer order
// 2..4096 for k=600 of n=60000, sigma=2 (the account default grid): binary
// powering of the 600-client moments plus one O(lambda) sum per order.
func BenchmarkSubsampledOrders2to4096(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, _ := NewSubsampled(2, 60000, 600)
		if _, err := s.RDP(4096); err != nil { // build the moment table once
			b.Fatal(err)
		}
		for o := 2; o <= 4096; o++ {
			if _, err := s.RDP(float64(o)); err != nil {
				b.Fatal(err)
			}
		}
	}
}
