package training

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/shuffledp/shuffledp/data"
)

// evalChunk is the number of examples per evaluation work item; losses are
// summed per chunk and the chunks in order, so the result does not depend
// on the number of workers.
const evalChunk = 256

// Evaluation is the model's performance on a data set.
type Evaluation struct {
	// Accuracy is the fraction of examples whose largest logit is the
	// label (ties go to the smallest class index).
	Accuracy float64
	// Loss is the mean softmax cross-entropy.
	Loss float64
}

// Evaluate computes the accuracy and mean cross-entropy of the current
// model on ds (the test set when ds is nil) in parallel over the workers.
func (t *Trainer) Evaluate(ds *data.Dataset) Evaluation {
	if ds == nil {
		ds = t.test
	}
	if ds == nil || ds.N == 0 {
		return Evaluation{Accuracy: math.NaN(), Loss: math.NaN()}
	}
	nChunks := (ds.N + evalChunk - 1) / evalChunk
	losses := make([]float64, nChunks)
	var correct atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	classes := t.model.NumClasses()
	for _, w := range t.eval[:min(len(t.eval), nChunks)] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logits := make([]float64, classes)
			for {
				c := int(next.Add(1) - 1)
				if c >= nChunks {
					return
				}
				var l float64
				var right int64
				for i := c * evalChunk; i < min(ds.N, (c+1)*evalChunk); i++ {
					w.Logits(ds.Example(i), logits)
					ce, pred := crossEntropy(logits, ds.Y[i])
					l += ce
					if pred == ds.Y[i] {
						right++
					}
				}
				losses[c] = l
				correct.Add(right)
			}
		}()
	}
	wg.Wait()
	var total float64
	for _, l := range losses {
		total += l
	}
	return Evaluation{
		Accuracy: float64(correct.Load()) / float64(ds.N),
		Loss:     total / float64(ds.N),
	}
}

// EvaluateAveraged evaluates, on ds (the test set when ds is nil), the
// exponential moving average of the parameters the server keeps
// (Config.EMA), and reports false without one. The model's parameters are
// swapped for the average and restored bit for bit.
func (t *Trainer) EvaluateAveraged(ds *data.Dataset) (Evaluation, bool) {
	if t.cfg.EMA == 0 {
		return Evaluation{}, false
	}
	params := t.model.Params()
	if t.avgScratch == nil {
		t.avgScratch = make([]float64, 2*len(params))
	}
	avg, saved := t.avgScratch[:len(params)], t.avgScratch[len(params):]
	if !t.server.Averaged(avg) {
		return Evaluation{}, false
	}
	copy(saved, params)
	copy(params, avg)
	defer copy(params, saved)
	return t.Evaluate(ds), true
}

// crossEntropy returns -log softmax(logits)[label], computed stably by
// log-sum-exp, and the predicted class (first largest logit).
func crossEntropy(logits []float64, label int) (float64, int) {
	pred := 0
	for i, v := range logits {
		if v > logits[pred] {
			pred = i
		}
	}
	m := logits[pred]
	var s float64
	for _, v := range logits {
		s += math.Exp(v - m)
	}
	return math.Log(s) + m - logits[label], pred
}
