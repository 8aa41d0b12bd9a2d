package features

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/shuffledp/shuffledp/data"
)

// Dataset returns the examples of ds mapped through s, each on its own
// (what every client computes on its example), using workers goroutines
// (at least 1). The result has the same labels, Dim = s.Dim() and is laid
// out as flat vectors (Rows = Dim, Cols = Channels = 1). The result does
// not depend on workers.
func (s *Scatter) Dataset(ds *data.Dataset, workers int) (*data.Dataset, error) {
	if ds.Channels != 1 || ds.Rows != s.Rows || ds.Cols != s.Cols {
		return nil, fmt.Errorf("features: %s needs %dx%d one-channel images, got %dx%dx%d", s.Name(), s.Rows, s.Cols, ds.Rows, ds.Cols, ds.Channels)
	}
	d := s.Dim()
	out := &data.Dataset{X: make([]float64, ds.N*d), Y: append([]int(nil), ds.Y...), N: ds.N, Dim: d,
		Rows: d, Cols: 1, Channels: 1, Classes: ds.Classes}
	workers = max(1, min(workers, ds.N))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := s.NewWorker()
			for i := w; i < ds.N; i += workers {
				wk.Transform(ds.Example(i), out.X[i*d:(i+1)*d])
			}
		}()
	}
	wg.Wait()
	return out, out.Validate()
}

// Key is the cache key of s applied to ds: the SHA-256 of the transform's
// name (every parameter) and of the data set's shape, pixels and labels.
func (s *Scatter) Key(ds *data.Dataset) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%d %d %d %d %d %d\n", s.Name(), ds.N, ds.Dim, ds.Rows, ds.Cols, ds.Channels, ds.Classes)
	var b [8]byte
	for _, v := range ds.X {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	for _, y := range ds.Y {
		binary.LittleEndian.PutUint64(b[:], uint64(y))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Cached is Dataset with a cache in dir (created if missing): the features
// are stored in dir/<Key>.f64 (little-endian float64s, written to a
// temporary file and renamed) and read back bit for bit by a later call.
// Since the transform is fixed and applied to each example alone, reading
// the cache is the same as computing it again. An empty dir disables the
// cache.
func (s *Scatter) Cached(ds *data.Dataset, dir string, workers int) (*data.Dataset, error) {
	if dir == "" {
		return s.Dataset(ds, workers)
	}
	path := filepath.Join(dir, s.Key(ds)+".f64")
	d := s.Dim()
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		out := &data.Dataset{X: make([]float64, ds.N*d), Y: append([]int(nil), ds.Y...), N: ds.N, Dim: d,
			Rows: d, Cols: 1, Channels: 1, Classes: ds.Classes}
		if err := binary.Read(f, binary.LittleEndian, out.X); err != nil {
			return nil, fmt.Errorf("features: cache %s: %w", path, err)
		}
		if n, _ := f.Read(make([]byte, 1)); n != 0 {
			return nil, fmt.Errorf("features: cache %s is longer than %d values", path, len(out.X))
		}
		return out, out.Validate()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out, err := s.Dataset(ds, workers)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".features-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := writeFloats(tmp, out.X); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	return out, os.Rename(tmp.Name(), path)
}

func writeFloats(w io.Writer, xs []float64) error {
	buf := make([]byte, 0, 1<<16)
	for _, v := range xs {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		if len(buf) == cap(buf) {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(buf)
	return err
}
