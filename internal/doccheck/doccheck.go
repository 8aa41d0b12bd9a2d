// Package doccheck checks the repository's Markdown files: every relative
// link resolves to a file or directory of the repository and, where it names
// a heading (#anchor), to a heading of that file, with GitHub's anchor rules.
// Its tests run the check on the whole repository, so a moved or renamed
// document cannot leave a dangling link behind, and hold README.md to a front
// door: at most 200 lines, opening with the main command and the test command,
// the latter exactly what .ci/run runs (FrontDoorCommands); and no file of
// the repository cites the issue tracker by number (TrackerReferences).
package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Link is one relative link found in a Markdown file.
type Link struct {
	File   string // the Markdown file, relative to the root
	Line   int    // from 1
	Target string // as written, e.g. "docs/accounting.md#the-bounds"
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s+(\S+)`)
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// Links returns the relative links of a Markdown text (not those inside code
// fences or inline code; not absolute URLs, mailto: or bare #anchors, which
// Check treats as links into the same file).
func Links(file string, md string) []Link {
	var out []Link
	inFence := false
	for i, line := range strings.Split(md, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
				continue
			}
			out = append(out, Link{File: file, Line: i + 1, Target: t})
		}
	}
	return out
}

// Anchor is GitHub's anchor of a heading's text: lower case, spaces to
// hyphens, every character but letters, digits, '-' and '_' dropped.
func Anchor(heading string) string {
	heading = strings.ReplaceAll(heading, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Anchors returns the anchors of a Markdown text's headings (outside code
// fences), numbered -1, -2, ... for repeats as GitHub does.
func Anchors(md string) map[string]bool {
	got := map[string]bool{}
	count := map[string]int{}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if text == "" || text[0] != ' ' {
			continue
		}
		a := Anchor(text)
		if n := count[a]; n > 0 {
			got[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			got[a] = true
		}
		count[a]++
	}
	return got
}

// Check returns one message per link of the Markdown files under root
// (directories whose names start with '.' are skipped) whose target does not
// exist, or whose #anchor names no heading of a Markdown target.
func Check(root string) ([]string, error) {
	var probs []string
	texts := map[string]string{}
	read := func(p string) (string, error) {
		if t, ok := texts[p]; ok {
			return t, nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		texts[p] = string(b)
		return texts[p], nil
	}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".md") {
			return nil
		}
		md, err := read(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, l := range Links(rel, md) {
			l.File = rel
			if msg := resolve(root, p, l, read); msg != "" {
				probs = append(probs, msg)
			}
		}
		return nil
	})
	return probs, err
}

func resolve(root, file string, l Link, read func(string) (string, error)) string {
	path, anchor, _ := strings.Cut(l.Target, "#")
	target := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			target = filepath.Join(root, path)
		} else {
			target = filepath.Join(filepath.Dir(file), path)
		}
		st, err := os.Stat(target)
		if err != nil {
			return fmt.Sprintf("%s:%d: link %q: no such file %s", l.File, l.Line, l.Target, relTo(root, target))
		}
		if st.IsDir() || anchor == "" {
			return ""
		}
	}
	if anchor == "" || !strings.HasSuffix(target, ".md") {
		return ""
	}
	md, err := read(target)
	if err != nil {
		return fmt.Sprintf("%s:%d: link %q: %v", l.File, l.Line, l.Target, err)
	}
	if !Anchors(md)[anchor] {
		return fmt.Sprintf("%s:%d: link %q: %s has no heading with anchor #%s", l.File, l.Line, l.Target, relTo(root, target), anchor)
	}
	return ""
}

func relTo(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

// FrontDoorCommands returns the two commands of the README's first code
// block: the main job and the test command (comments after '#' dropped).
func FrontDoorCommands(readme string) (mainCmd, testCmd string, err error) {
	var cmds []string
	in := false
	for _, line := range strings.Split(readme, "\n") {
		if fence.MatchString(line) {
			if in {
				break
			}
			in = true
			continue
		}
		if !in {
			continue
		}
		if c, _, _ := strings.Cut(line, "#"); strings.TrimSpace(c) != "" {
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	if len(cmds) != 2 {
		return "", "", fmt.Errorf("the README's first code block holds %d commands, want 2 (the main job, the tests): %q", len(cmds), cmds)
	}
	return cmds[0], cmds[1], nil
}
