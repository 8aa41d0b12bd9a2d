package pki

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// BenchmarkEnrolMillion measures `pki enrol` of 1,000,000 clients without
// the process start: Enrol (one HMAC-SHA256 per client) and
// WriteCredentials (JSON, one fsync).
func BenchmarkEnrolMillion(b *testing.B) {
	e, err := NewEnroller(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	i := 0
	for b.Loop() {
		c, err := e.Enrol(0, MaxEnrol)
		if err != nil {
			b.Fatal(err)
		}
		i++
		if err := WriteCredentials(filepath.Join(dir, "c"+string(rune('a'+i%26))+".json"), c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEnrolMatchesToken: every credential Enrol issues is Token's, for
// ranges at 0, in the middle and near the largest index.
func TestEnrolMatchesToken(t *testing.T) {
	e, err := NewEnroller([]byte("0123456789abcdef0123456789abcdef!"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{0, 1}, {0, 300}, {12345, 12400}, {1<<62 - 5, 1 << 62}} {
		c, err := e.Enrol(r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		for i := r[0]; i < r[1]; i++ {
			if got := c.Token(i); !bytes.Equal(got, e.Token(i)) || len(got) != TokenSize || !e.Verify(i, got) {
				t.Fatalf("range %v: client %d: token %x, Token %x", r, i, got, e.Token(i))
			}
		}
	}
}

// TestEncodeCredentialsIsJSONMarshal: the streamed file is json.Marshal's
// bytes, for issued credentials, odd tokens and nil tokens.
func TestEncodeCredentialsIsJSONMarshal(t *testing.T) {
	e, err := NewEnroller(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	issued, err := e.Enrol(7, 1007)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Credentials{
		issued,
		{Lo: 0, Hi: 1, Tokens: [][]byte{{}}},
		{Lo: -3, Hi: 1 << 40, Tokens: [][]byte{{0xff}, {0xfb, 0xef}, nil, []byte("<&>")}},
		{Lo: 1, Hi: 2},
		{Tokens: [][]byte{}},
	} {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := encodeCredentials(&got, c); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("streamed %q\njson.Marshal %q", got.Bytes(), want)
		}
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := WriteCredentials(path, issued); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCredentials(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Lo != issued.Lo || back.Hi != issued.Hi || len(back.Tokens) != len(issued.Tokens) || !bytes.Equal(back.Tokens[999], issued.Tokens[999]) {
		t.Fatalf("read back %d:%d with %d tokens", back.Lo, back.Hi, len(back.Tokens))
	}
}
