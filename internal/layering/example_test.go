package layering_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/internal/layering"
)

func ExampleCheck() {
	table := "| layer | package |\n|---|---|\n| roles | `server` |\n| mechanisms | `randomizer` |\n"
	rows, _ := layering.ParseTable([]byte(table))
	graph := map[string][]string{"server": {"randomizer"}, "randomizer": {"server"}}
	for _, p := range layering.Check(rows, graph, nil) {
		fmt.Println(p)
	}
	// Output: import randomizer → server runs upward: server (roles, line 3) is listed above randomizer (mechanisms, line 4) in ARCHITECTURE.md
}
