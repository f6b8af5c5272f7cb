package web

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// ModuleCacheControl is how a browser keeps the proof check's module: for a year,
// without asking again. Its name holds its hash, so a build with another module
// serves it under another name, and a page never runs a module of another build.
const ModuleCacheControl = "public, max-age=31536000, immutable"

// module is the proof check compiled to WebAssembly, gzipped as it is embedded, and
// served under path with the hash of those bytes.
type module struct {
	gz []byte
	// path is "/static/verify.<the first 16 hex digits of the SHA-256 of gz>.wasm".
	path string
	etag string
}

func newModule(gz []byte) *module {
	sum := sha256.Sum256(gz)
	digest := hex.EncodeToString(sum[:])
	return &module{gz: gz, path: "/static/verify." + digest[:16] + ".wasm", etag: `"` + digest + `"`}
}

// ServeHTTP serves the module, or 304 to a browser that names its hash in
// If-None-Match.
func (m *module) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", ModuleCacheControl)
	h.Set("ETag", m.etag)
	if strings.Contains(r.Header.Get("If-None-Match"), m.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/wasm")
	h.Set("Content-Encoding", "gzip")
	_, _ = w.Write(m.gz)
}
