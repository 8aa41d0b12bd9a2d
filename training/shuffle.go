package training

// shuffle is Algorithm 1, line 9 — placeholder until package shuffler lands.
func (t *Trainer) shuffle(roundKey uint64) error {
	return nil
}
