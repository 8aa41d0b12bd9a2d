package federated

import (
	"io"
	"sync"

	"github.com/shuffledp/shuffledp/training"
)

type trainingEvaluation = training.Evaluation

// lockedWriter serializes writes of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
