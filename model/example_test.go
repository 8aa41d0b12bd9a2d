package model_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/model"
)

func ExampleNewLogReg() {
	m, err := model.NewLogReg(784, 10)
	if err != nil {
		panic(err)
	}
	w := m.NewWorker()
	x := make([]float64, 784)
	grad := make([]float64, m.NumParams())
	loss := w.Gradient(x, 3, grad) // zero parameters: uniform prediction
	fmt.Printf("%d params, loss %.4f = ln 10, d loss/d b_3 = %.1f\n", m.NumParams(), loss, grad[10*784+3])
	// Output: 7850 params, loss 2.3026 = ln 10, d loss/d b_3 = -0.9
}

func ExampleNewCNN() {
	// The CNN of Girgis et al. (NeurIPS 2021), Table 1, for 28x28 MNIST.
	m, err := model.NewCNN(28, 28, 10)
	if err != nil {
		panic(err)
	}
	w := m.NewWorker() // one per goroutine
	x := make([]float64, m.InputDim())
	x[14*28+14] = 1 // a single bright pixel
	grad := make([]float64, m.NumParams())
	loss := w.Gradient(x, 7, grad)
	fmt.Printf("%d parameters, finite loss: %v\n", m.NumParams(), loss > 0 && loss < 10)
	// Output: 26010 parameters, finite loss: true
}
