package pki

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// secretSize is the length of the client-credential secret.
const secretSize = 32

// TokenSize is the length of a client's credential.
const TokenSize = sha256.Size

// tokenLabel separates credential tokens from any other use of the secret.
const tokenLabel = "shuffledp client credential v1"

// Enroller issues and checks client credentials: the credential of client
// i is the bearer token HMAC-SHA256(secret, label || i) (i as 8 bytes big
// endian), so the shuffler checks a token with its secret alone, keeps no
// per-client table, and a client holding its own token cannot forge
// another client's. It is safe for concurrent use.
type Enroller struct {
	secret []byte
	// macs holds keyed HMAC states for reuse: the shuffler checks a token
	// per report, and a fresh HMAC's key setup (two SHA-256 blocks and
	// its allocations) cost more than the token's own hashing.
	macs sync.Pool
}

// NewEnroller returns the enroller of a secret of at least 32 bytes.
func NewEnroller(secret []byte) (*Enroller, error) {
	if len(secret) < secretSize {
		return nil, fmt.Errorf("pki: client secret of %d bytes, want >= %d", len(secret), secretSize)
	}
	return &Enroller{secret: append([]byte(nil), secret...)}, nil
}

// LoadEnroller reads the client-credential secret (clients.key) of the
// shuffler's bundle dir, or of the operator's part of a pki init
// directory dir, refusing a file with group or other permissions.
func LoadEnroller(dir string) (*Enroller, error) {
	p := filepath.Join(dir, ClientsKeyFile)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		if op := filepath.Join(dir, OperatorDir, ClientsKeyFile); fileExists(op) {
			p = op
		}
	}
	if err := CheckPrivate(p); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	return NewEnroller(b)
}

// Token returns client's credential.
func (e *Enroller) Token(client int64) []byte {
	return e.token(client, nil)
}

// macState is a keyed HMAC state with the scratch memory of one token: the
// message (tokenLabel and the client's index) and the sum. Kept in the
// pool with the state, so that a token check allocates nothing (the
// message and the sum, passed to the hash's interface methods, would
// otherwise escape to the heap: three allocations per report checked).
type macState struct {
	h   hash.Hash
	msg [len(tokenLabel) + 8]byte
	sum [TokenSize]byte
}

// state returns a reset keyed state from the pool (a new one if empty).
func (e *Enroller) state() *macState {
	st, _ := e.macs.Get().(*macState)
	if st == nil {
		st = &macState{h: hmac.New(sha256.New, e.secret)}
		copy(st.msg[:], tokenLabel)
	} else {
		st.h.Reset()
	}
	return st
}

// mac computes client's credential into st.sum and returns it.
func (st *macState) mac(client int64) []byte {
	binary.BigEndian.PutUint64(st.msg[len(tokenLabel):], uint64(client))
	st.h.Write(st.msg[:])
	return st.h.Sum(st.sum[:0])
}

// token appends client's credential to dst.
func (e *Enroller) token(client int64, dst []byte) []byte {
	st := e.state()
	dst = append(dst, st.mac(client)...)
	e.macs.Put(st)
	return dst
}

// Verify reports whether token is client's credential (in constant time).
func (e *Enroller) Verify(client int64, token []byte) bool {
	if client < 0 {
		return false
	}
	st := e.state()
	ok := hmac.Equal(st.mac(client), token)
	e.macs.Put(st)
	return ok
}

// Credentials are the credentials of the clients [Lo, Hi): Tokens[i] is
// client Lo+i's. A client process reads them from the file Enrol writes.
type Credentials struct {
	Lo     int64    `json:"lo"`
	Hi     int64    `json:"hi"`
	Tokens [][]byte `json:"tokens"`
}

// Token returns client's token, or nil if the credentials do not hold it.
func (c *Credentials) Token(client int64) []byte {
	if client < c.Lo || client >= c.Hi {
		return nil
	}
	return c.Tokens[client-c.Lo]
}

// MaxEnrol is the most clients one credentials file holds (Enrol refuses
// more): about 60 MB of JSON, read whole by the client process hosting
// them. Enrol a larger population in several files.
const MaxEnrol = 1_000_000

// maxCredentialsFile bounds the size of a credentials file ReadCredentials
// reads (MaxEnrol tokens in base64 JSON, with room).
const maxCredentialsFile = 64 * MaxEnrol

// Enrol issues the credentials of the clients [lo, hi) (at most MaxEnrol).
func (e *Enroller) Enrol(lo, hi int64) (*Credentials, error) {
	if lo < 0 || hi <= lo {
		return nil, fmt.Errorf("clients must be LO:HI with 0 <= LO < HI, got %d:%d", lo, hi)
	}
	if hi-lo > MaxEnrol {
		return nil, fmt.Errorf("clients %d:%d: %d clients, at most %d per credentials file (enrol the range in several files, one per client process)", lo, hi, hi-lo, MaxEnrol)
	}
	// One HMAC reset per client (Token's keyed state is rebuilt each
	// call) and the tokens in one allocation: 1,000,000 clients in about
	// half the time (BENCHMARKS).
	c := &Credentials{Lo: lo, Hi: hi, Tokens: make([][]byte, hi-lo)}
	backing := make([]byte, len(c.Tokens)*TokenSize)
	m := hmac.New(sha256.New, e.secret)
	msg := make([]byte, len(tokenLabel)+8)
	copy(msg, tokenLabel)
	for i := range c.Tokens {
		m.Reset()
		binary.BigEndian.PutUint64(msg[len(tokenLabel):], uint64(lo+int64(i)))
		m.Write(msg)
		c.Tokens[i] = m.Sum(backing[i*TokenSize : i*TokenSize : (i+1)*TokenSize])
	}
	return c, nil
}

// WriteCredentials writes c to path (created 0600, never overwritten,
// fsynced): the bytes of json.Marshal(c), streamed through a buffer
// instead of built in memory whole (a million credentials are 47 MB).
func WriteCredentials(path string, c *Credentials) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	err = encodeCredentials(f, c)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pki: %s: %w", path, err)
	}
	return nil
}

// encodeCredentials writes json.Marshal(c)'s bytes to w: the fields in
// declaration order, integers in decimal, each token in standard base64
// with padding (none of whose characters JSON escapes).
func encodeCredentials(w io.Writer, c *Credentials) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	b := make([]byte, 0, 64)
	b = append(b, `{"lo":`...)
	b = strconv.AppendInt(b, c.Lo, 10)
	b = append(b, `,"hi":`...)
	b = strconv.AppendInt(b, c.Hi, 10)
	b = append(b, `,"tokens":`...)
	bw.Write(b)
	if c.Tokens == nil {
		bw.WriteString("null}")
		return bw.Flush()
	}
	bw.WriteByte('[')
	for i, t := range c.Tokens {
		b = b[:0]
		if i > 0 {
			b = append(b, ',')
		}
		if t == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, t)
			b = append(b, '"')
		}
		bw.Write(b)
	}
	bw.WriteString("]}")
	return bw.Flush()
}

// ReadCredentials reads a credentials file and checks its shape, refusing
// a file with group or other permissions and one larger than MaxEnrol
// credentials could be.
func ReadCredentials(path string) (*Credentials, error) {
	if err := CheckPrivate(path); err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if st, err := os.Stat(path); err == nil && st.Size() > maxCredentialsFile {
		return nil, fmt.Errorf("credentials %s: %d bytes, more than %d credentials could take", path, st.Size(), MaxEnrol)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	if c.Lo < 0 || c.Hi <= c.Lo || int64(len(c.Tokens)) != c.Hi-c.Lo {
		return nil, fmt.Errorf("credentials %s: %d tokens for clients %d:%d", path, len(c.Tokens), c.Lo, c.Hi)
	}
	for i, t := range c.Tokens {
		if len(t) != TokenSize {
			return nil, fmt.Errorf("credentials %s: token of client %d has %d bytes, want %d", path, c.Lo+int64(i), len(t), TokenSize)
		}
	}
	return &c, nil
}

// writeSecret writes a secret file 0600.
func writeSecret(path string, b []byte) error { return writeFile(path, b, 0o600) }
