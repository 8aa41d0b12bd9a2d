package model

import "math"

// softmaxCrossEntropy computes the softmax cross-entropy loss
// -log softmax(logits)[label] and writes its gradient with respect to the
// logits, softmax(logits) - onehot(label), into dlogits. It subtracts the
// maximum logit first, so it neither overflows nor returns NaN for finite
// logits. dlogits may alias logits.
func softmaxCrossEntropy(logits []float64, label int, dlogits []float64) float64 {
	zy := logits[label]
	m := logits[0]
	for _, v := range logits[1:] {
		m = max(m, v)
	}
	var sum float64
	for i, v := range logits {
		e := math.Exp(v - m)
		dlogits[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range dlogits {
		dlogits[i] *= inv
	}
	dlogits[label] -= 1
	return math.Log(sum) + m - zy
}

// Argmax returns the index of the largest logit (the first on ties): the
// predicted class.
func Argmax(logits []float64) int {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return best
}
