// Package layering checks the module's import graph against the layer table
// of ARCHITECTURE.md, which is the source of truth for which package may
// import which.
//
// The table lists every package of the module, top to bottom; a package may
// import only packages listed below it (so imports run downward, never up or
// sideways to a row above). ParseTable reads the table from the Markdown,
// Check compares it with an import graph (such as `go list` prints) and names
// every edge the table does not allow, every package missing from the table
// and every row naming no package. Tests of this package run Check on the
// module itself.
package layering

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Row is one package of the layer table.
type Row struct {
	Layer   string // the layer's name (the first column, carried down blank cells)
	Package string // import path relative to the module, e.g. "internal/logmath"
	Line    int    // line in the Markdown file, from 1
}

// Edge is one import: From imports To (paths relative to the module).
type Edge struct{ From, To string }

func (e Edge) String() string { return e.From + " → " + e.To }

// ParseTable reads the first Markdown table whose header's first two cells
// are "layer" and "package". The package is the first `backticked` word of
// the second cell; a row naming a package already listed (a second row for
// the same binary) is skipped; an empty layer cell continues the layer above.
func ParseTable(md []byte) ([]Row, error) {
	var rows []Row
	seen := map[string]bool{}
	in, layer := false, ""
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 2 {
			continue
		}
		c0, c1 := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1])
		if !in {
			if c0 == "layer" && c1 == "package" {
				in = true
			}
			continue
		}
		if strings.Trim(c0+c1, "-: ") == "" {
			continue // the |---|---| separator
		}
		if c0 != "" {
			layer = c0
		}
		pkg, ok := firstCode(c1)
		if !ok {
			return nil, fmt.Errorf("layer table line %d: no `package` in the package column: %q", n, c1)
		}
		if seen[pkg] {
			continue
		}
		seen[pkg] = true
		rows = append(rows, Row{Layer: layer, Package: pkg, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no layer table (a Markdown table with header | layer | package | ...) found")
	}
	return rows, nil
}

func firstCode(s string) (string, bool) {
	i := strings.IndexByte(s, '`')
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(s[i+1:], '`')
	if j <= 0 {
		return "", false
	}
	return s[i+1 : i+1+j], true
}

// Check compares the import graph (every package of the module, mapped to
// the module packages it imports; paths relative to the module) with the
// table. It returns one message per problem, sorted: a package missing from
// the table, a row naming no package of the module, an import of a package
// listed above the importer that allowed does not excuse, and an entry of
// allowed that no longer occurs (so the list only shrinks as the code is
// fixed). allowed maps each excused upward edge to the reason it is excused.
func Check(rows []Row, imports map[string][]string, allowed map[Edge]string) []string {
	var probs []string
	pos := map[string]int{}
	for i, r := range rows {
		pos[r.Package] = i
		if _, ok := imports[r.Package]; !ok {
			probs = append(probs, fmt.Sprintf("ARCHITECTURE.md line %d lists %s, which is not a package of the module: remove or rename the row", r.Line, r.Package))
		}
	}
	used := map[Edge]bool{}
	for from, tos := range imports {
		pf, ok := pos[from]
		if !ok {
			probs = append(probs, fmt.Sprintf("package %s is not in ARCHITECTURE.md's layer table: add a row for it in its layer", from))
			continue
		}
		for _, to := range tos {
			pt, ok := pos[to]
			if !ok || pt > pf {
				continue // unlisted targets are reported as packages; below is fine
			}
			e := Edge{from, to}
			if _, ok := allowed[e]; ok {
				used[e] = true
				continue
			}
			probs = append(probs, fmt.Sprintf("import %s runs upward: %s (%s, line %d) is listed above %s (%s, line %d) in ARCHITECTURE.md",
				e, to, rows[pt].Layer, rows[pt].Line, from, rows[pf].Layer, rows[pf].Line))
		}
	}
	for e := range allowed {
		if !used[e] {
			probs = append(probs, fmt.Sprintf("the excused upward import %s no longer occurs: delete it from the allowed list", e))
		}
	}
	sort.Strings(probs)
	return probs
}

// Upward returns the imports of the graph that run upward in the table
// (allowed or not), sorted; packages missing from the table are ignored.
func Upward(rows []Row, imports map[string][]string) []Edge {
	pos := map[string]int{}
	for i, r := range rows {
		pos[r.Package] = i
	}
	var up []Edge
	for from, tos := range imports {
		pf, ok := pos[from]
		if !ok {
			continue
		}
		for _, to := range tos {
			if pt, ok := pos[to]; ok && pt <= pf {
				up = append(up, Edge{from, to})
			}
		}
	}
	sort.Slice(up, func(i, j int) bool { return up[i].String() < up[j].String() })
	return up
}
