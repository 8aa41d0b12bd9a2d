package federated

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// lastWords passes what cluster writes (each child's lines prefixed with
// "[NAME] ") to w and keeps each child's last line, so that Up's error for
// a child that failed ("client 0:6: exit status 1") can say why in the
// child's own words: a role's last line is its error (a bad callback's
// names the function).
type lastWords struct {
	mu      sync.Mutex
	w       io.Writer
	partial []byte
	last    map[string]string
}

func (l *lastWords) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		if strings.HasPrefix(line, "[") {
			if j := strings.Index(line, "] "); j > 0 {
				l.last[line[1:j]] = line[j+2:]
			}
		}
	}
	if l.w == nil {
		return len(p), nil
	}
	return l.w.Write(p)
}

// explain adds to err the last line of the child it names.
func (l *lastWords) explain(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, line := range l.last {
		if strings.HasPrefix(err.Error(), name+": ") {
			return fmt.Errorf("%w; its last line: %s", err, line)
		}
	}
	return err
}
