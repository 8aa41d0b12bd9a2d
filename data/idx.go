package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// IDX data type codes (third byte of the magic number), as defined by the
// IDX file format of LeCun, Cortes and Burges, "The MNIST database of
// handwritten digits" (http://yann.lecun.com/exdb/mnist/).
const (
	IDXUint8   byte = 0x08 // unsigned byte
	IDXInt8    byte = 0x09 // signed byte
	IDXInt16   byte = 0x0B // big-endian int16
	IDXInt32   byte = 0x0C // big-endian int32
	IDXFloat32 byte = 0x0D // big-endian IEEE-754 float32
	IDXFloat64 byte = 0x0E // big-endian IEEE-754 float64
)

// maxIDXElements bounds the number of elements an IDX header may declare
// (2^31), so that a corrupt header cannot make the reader allocate
// unbounded memory.
const maxIDXElements = 1 << 31

// IDX is one decoded IDX file: an n-dimensional array of numbers stored in
// row-major order, the format of MNIST, Fashion-MNIST, KMNIST and EMNIST.
//
// The file starts with the magic number 0x00 0x00 TYPE NDIMS, then NDIMS
// big-endian uint32 sizes, then the data, big-endian, row-major.
type IDX struct {
	// Type is the element type code (IDXUint8, ...).
	Type byte
	// Dims are the sizes of the dimensions; Dims[0] is the number of
	// items (images or labels).
	Dims []int
	// Data holds the raw values converted to float64 (not rescaled),
	// len(Data) = product of Dims.
	Data []float64
}

// ItemSize is the number of values in one item: the product of Dims[1:]
// (1 for a label file).
func (f *IDX) ItemSize() int {
	s := 1
	for _, d := range f.Dims[1:] {
		s *= d
	}
	return s
}

// ReadIDX decodes an IDX file from r. A gzip-compressed stream (as
// distributed at yann.lecun.com and by Fashion-MNIST) is detected by its
// magic bytes and decompressed transparently.
func ReadIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("idx: gzip header: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	var magic [4]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, fmt.Errorf("idx: reading magic number: %w", err)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("idx: bad magic number % x: first two bytes must be zero", magic)
	}
	typ, ndims := magic[2], int(magic[3])
	width := idxWidth(typ)
	if width == 0 {
		return nil, fmt.Errorf("idx: unknown data type code 0x%02x", typ)
	}
	if ndims == 0 {
		return nil, errors.New("idx: number of dimensions must be at least 1, got 0")
	}
	dims := make([]int, ndims)
	total := 1
	for i := range dims {
		var d uint32
		if err := binary.Read(br, binary.BigEndian, &d); err != nil {
			return nil, fmt.Errorf("idx: reading size of dimension %d: %w", i, err)
		}
		dims[i] = int(d)
		if d != 0 && total > maxIDXElements/int(d) {
			return nil, fmt.Errorf("idx: header declares more than %d elements", maxIDXElements)
		}
		total *= int(d)
	}
	raw := make([]byte, total*width)
	if _, err := io.ReadFull(br, raw); err != nil {
		return nil, fmt.Errorf("idx: header declares %d elements of %d bytes but the data is short: %w", total, width, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("idx: trailing bytes after %d declared elements", total)
	}
	out := make([]float64, total)
	switch typ {
	case IDXUint8:
		for i, b := range raw {
			out[i] = float64(b)
		}
	case IDXInt8:
		for i, b := range raw {
			out[i] = float64(int8(b))
		}
	case IDXInt16:
		for i := range out {
			out[i] = float64(int16(binary.BigEndian.Uint16(raw[2*i:])))
		}
	case IDXInt32:
		for i := range out {
			out[i] = float64(int32(binary.BigEndian.Uint32(raw[4*i:])))
		}
	case IDXFloat32:
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.BigEndian.Uint32(raw[4*i:])))
		}
	case IDXFloat64:
		for i := range out {
			out[i] = math.Float64frombits(binary.BigEndian.Uint64(raw[8*i:]))
		}
	}
	return &IDX{Type: typ, Dims: dims, Data: out}, nil
}

// ReadIDXFile decodes the IDX file at path (optionally gzip-compressed).
func ReadIDXFile(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx, err := ReadIDX(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return idx, nil
}

// EncodeIDXUint8 encodes values (each an integer in [0, 255]) with the given
// dimensions as an unsigned-byte IDX file. It is the inverse of ReadIDX for
// IDXUint8 data and is used to write test fixtures.
func EncodeIDXUint8(dims []int, values []byte) ([]byte, error) {
	if len(dims) == 0 || len(dims) > 255 {
		return nil, fmt.Errorf("idx: number of dimensions must be in [1, 255], got %d", len(dims))
	}
	total := 1
	for i, d := range dims {
		if d < 0 || d > math.MaxUint32 {
			return nil, fmt.Errorf("idx: dims[%d] must be in [0, 2^32), got %d", i, d)
		}
		total *= d
	}
	if total != len(values) {
		return nil, fmt.Errorf("idx: dims declare %d elements but len(values) = %d", total, len(values))
	}
	var buf bytes.Buffer
	buf.Write([]byte{0, 0, IDXUint8, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&buf, binary.BigEndian, uint32(d))
	}
	buf.Write(values)
	return buf.Bytes(), nil
}

func idxWidth(typ byte) int {
	switch typ {
	case IDXUint8, IDXInt8:
		return 1
	case IDXInt16:
		return 2
	case IDXInt32, IDXFloat32:
		return 4
	case IDXFloat64:
		return 8
	}
	return 0
}
