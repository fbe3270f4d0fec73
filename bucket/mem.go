package bucket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// A Mem is a Store in memory, with S3's semantics (whole objects, ETags
// that change with the content, conditional writes), for unit tests.
// SetHooks injects faults. Safe for concurrent use.
type Mem struct {
	mu   sync.Mutex
	objs map[string]memObject
	// The hooks (SetHooks).
	beforePut func(key string, data []byte) error
	afterPut  func(key string) error
	beforeGet func(key string) error
	puts      int
}

// MemHooks inject faults into a Mem.
type MemHooks struct {
	// BeforePut, if not nil, is called before each Put with its key; an
	// error fails the Put without writing anything.
	BeforePut func(key string, data []byte) error
	// AfterPut, if not nil, is called after each Put that wrote; an error
	// is returned to the caller although the object was written (a reply
	// lost on the way back).
	AfterPut func(key string) error
	// BeforeGet, if not nil, is called before each Get; an error fails it.
	BeforeGet func(key string) error
}

// SetHooks replaces the hooks (the zero MemHooks: none).
func (m *Mem) SetHooks(h MemHooks) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.beforePut, m.afterPut, m.beforeGet = h.BeforePut, h.AfterPut, h.BeforeGet
}

type memObject struct {
	data []byte
	etag string
	opts PutOptions
}

// NewMem returns an empty Mem.
func NewMem() *Mem { return &Mem{objs: map[string]memObject{}} }

// URL implements Store.
func (m *Mem) URL() string { return "mem://bucket/" }

// Get implements Store.
func (m *Mem) Get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	hook := m.beforeGet
	m.mu.Unlock()
	if hook != nil {
		if err := hook(key); err != nil {
			return nil, "", fmt.Errorf("bucket: GET %s: %w", key, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return nil, "", fmt.Errorf("bucket: GET %s: %w", key, ErrNotFound)
	}
	if ifNoneMatch != "" && ifNoneMatch == o.etag {
		return nil, "", fmt.Errorf("bucket: GET %s: %w", key, ErrNotModified)
	}
	return bytes.Clone(o.data), o.etag, nil
}

// Put implements Store.
func (m *Mem) Put(ctx context.Context, key string, data []byte, o PutOptions) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	before, after := m.beforePut, m.afterPut
	m.mu.Unlock()
	if before != nil {
		if err := before(key, data); err != nil {
			return "", fmt.Errorf("bucket: PUT %s: %w", key, err)
		}
	}
	m.mu.Lock()
	old, exists := m.objs[key]
	switch {
	case o.IfNoneMatch && exists:
		m.mu.Unlock()
		return "", fmt.Errorf("bucket: PUT %s: %w (HTTP 412)", key, ErrPrecondition)
	case o.IfMatch != "" && (!exists || old.etag != o.IfMatch):
		m.mu.Unlock()
		if !exists {
			return "", fmt.Errorf("bucket: PUT %s: %w", key, ErrNotFound)
		}
		return "", fmt.Errorf("bucket: PUT %s: %w (HTTP 412)", key, ErrPrecondition)
	}
	sum := sha256.Sum256(data)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	m.objs[key] = memObject{data: bytes.Clone(data), etag: etag, opts: o}
	m.puts++
	m.mu.Unlock()
	if after != nil {
		if err := after(key); err != nil {
			return "", fmt.Errorf("bucket: PUT %s: %w", key, err)
		}
	}
	return etag, nil
}

// Object returns an object's bytes, or nil if there is none (tests).
func (m *Mem) Object(key string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return nil
	}
	return bytes.Clone(o.data)
}

// Keys returns the keys under prefix, sorted (tests).
func (m *Mem) Keys(prefix string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Puts returns the number of Puts that wrote (tests).
func (m *Mem) Puts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.puts
}

// Delete removes an object (tests: a lost object).
func (m *Mem) Delete(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
}
