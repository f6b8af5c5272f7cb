package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	cmtjson "github.com/cometbft/cometbft/libs/json"
	rpcclient "github.com/cometbft/cometbft/rpc/client"
	cmttypes "github.com/cometbft/cometbft/types"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// DefaultListen is where the web view listens when app.toml does not say otherwise.
const DefaultListen = "127.0.0.1:26680"

// RequestTimeout bounds the work of one page: its reads of the node included.
const RequestTimeout = 10 * time.Second

// ContentSecurityPolicy is sent with every answer: nothing but this origin's styles,
// images and scripts (and the WebAssembly of the proof check), fetches to this origin
// only, no inline script, no frames, forms posting to this origin.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; " +
	"script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// wasmFile is the proof check compiled to WebAssembly, gzipped (make web-wasm); a build
// without it serves pages that say how to check a proof offline instead.
const wasmFile = "static/verify.wasm.gz"

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Options configure a Server.
type Options struct {
	// Trusted is the genesis validator set the overview shows and pins; InitialHeight
	// the chain's first height (0: 1), whose block the genesis set signed: a bundle
	// whose header names another set carries the trace from there.
	Trusted       *cmttypes.ValidatorSet
	InitialHeight int64
	Logger        zerolog.Logger
	// MaxStreams bounds the live streams served at once (0: DefaultMaxStreams).
	MaxStreams int
	// CORSOrigins are the origins whose pages may read the JSON API ("*": any); none
	// by default.
	CORSOrigins []string
}

// Server answers the web view's pages from a node's RPC.
type Server struct {
	// rpc is the node's RPC with the address-changes answers at a height kept (scanRPC);
	// c reads through it.
	rpc   rpcclient.Client
	c     *client.Client
	opts  Options
	pages map[string]*template.Template
	// module is the embedded proof check, nil when the build has none.
	module  *module
	heights heights
	// indexed is what indexing found of the node's transaction index.
	indexed atomic.Int32
	// live feeds the live streams (live.go).
	live *live
	// lightBlocks are the light blocks traces are built of, by height (a height's never
	// changes once committed).
	lightBlocks *lru.Cache[int64, *cmttypes.LightBlock]
	// txCounts are the running transaction counts the statistics read (stats.go).
	txCounts txCounts
	// local holds the local chain's lowered limits once read (localLimits).
	local struct {
		sync.Mutex
		read   bool
		limits protocol.LocalLimits
	}
}

// New returns a server reading through rpc (CometBFT's RPC client: in process or
// over HTTP).
func New(rpc rpcclient.Client, opts Options) (*Server, error) {
	scans, err := newScanRPC(rpc)
	if err != nil {
		return nil, err
	}
	hs, err := newHeights()
	if err != nil {
		return nil, err
	}
	blocks, err := lru.New[int64, *cmttypes.LightBlock](lightBlockCache)
	if err != nil {
		return nil, err
	}
	s := &Server{rpc: scans, c: client.New(scans, client.Options{MaxAge: -1, Trusted: opts.Trusted}), opts: opts,
		pages: map[string]*template.Template{}, heights: hs, lightBlocks: blocks}
	s.live = newLive(fmt.Sprintf("ttld-web-%p", s), opts.MaxStreams)
	if b, err := staticFiles.ReadFile(wasmFile); err == nil {
		s.module = newModule(b)
	}
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if n == "templates/layout.html" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", n, err)
		}
		s.pages[n[len("templates/"):]] = t
	}
	return s, nil
}

// Handler serves the pages, the charts and the static files.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", files(static)))
	mux.HandleFunc("GET /favicon.ico", favicon(static))
	// The module only under its hashed name (pages name it), never as the embedded file.
	mux.Handle("GET /"+wasmFile, http.NotFoundHandler())
	if s.module != nil {
		mux.Handle("GET "+s.module.path, s.module)
	}
	mux.HandleFunc("GET /validators.json", s.validatorsJSON)
	api := http.NewServeMux()
	for _, p := range s.pageKinds() {
		mux.HandleFunc("GET "+p.path, s.page(p.template, p.load))
		api.HandleFunc("GET "+APIPrefix+p.path, s.api(p.load))
	}
	api.HandleFunc(APIPrefix+"/", apiNotFound)
	mux.HandleFunc("GET /proof", s.proof)
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /chart/backlog.svg", s.chart(s.backlogChart))
	mux.HandleFunc("GET /chart/blocks.svg", s.chart(s.blocksChart))
	mux.HandleFunc("GET /chart/rate.svg", s.chart(s.rateChart))
	mux.HandleFunc("GET /chart/storage.svg", s.chart(s.storageChart))
	// The live stream lasts as long as its reader stays: it is the one answer not
	// bounded by RequestTimeout.
	root := http.NewServeMux()
	root.HandleFunc("GET /live", s.liveStream)
	root.Handle(APIPrefix+"/", http.TimeoutHandler(api, RequestTimeout, apiTimeout))
	root.Handle("/", http.TimeoutHandler(mux, RequestTimeout, "the page took too long"))
	return cors(s.opts.CORSOrigins, secure(root))
}

// pageKind is a kind of page: its path pattern, its template and what it reads. The
// JSON API serves each at APIPrefix and the same path.
type pageKind struct {
	path, template string
	load           func(r *http.Request) (any, error)
}

// pageKinds are the view's pages.
func (s *Server) pageKinds() []pageKind {
	return []pageKind{
		{"/{$}", "overview.html", s.overview},
		{"/stats", "stats.html", s.stats},
		{"/blocks", "blocks.html", s.blocks},
		{"/block/{height}", "block.html", s.block},
		{"/txs", "txs.html", s.txs},
		{"/tx/{hash}", "tx.html", s.tx},
		{"/identity/{id}", "identity.html", s.identity},
		{"/identity/{id}/history", "history.html", s.accountHistory(true)},
		{"/address/{address}", "address.html", s.address},
		{"/address/{address}/history", "history.html", s.accountHistory(false)},
		{"/contracts", "contracts.html", s.contracts},
		{"/contract/{id}", "contract.html", s.contract},
		{"/documents/{contract}/{type}", "documents.html", s.documents},
		{"/document/{contract}/{type}/{id}", "document.html", s.document},
		{"/document/{contract}/{type}/{id}/history", "history.html", s.documentHistory},
		{"/validators", "validators.html", s.validators},
		{"/validator/{address}", "validator.html", s.validator},
		{"/epochs", "epochs.html", s.epochs},
	}
}

// secure sets the headers every answer carries and refuses any method but GET and
// HEAD: the view changes nothing.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the web view is read only", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// errBadInput: a path or query value the page cannot read.
type errBadInput struct{ What, Value, Want string }

func (e errBadInput) Error() string {
	return fmt.Sprintf("%s %.80q: want %s", e.What, e.Value, e.Want)
}

// errNotFound: what the page names does not exist at the state read.
type errNotFound struct{ What string }

func (e errNotFound) Error() string { return e.What + " not found" }

// page serves template name with the data load returns, or an error page.
func (s *Server) page(name string, load func(r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := load(r)
		// NB: the template of this answer, never name itself: name is shared by
		// every request of the route, and an error page must not become the route's.
		status, tmpl := http.StatusOK, name
		if err != nil {
			status, tmpl, data = s.failure(r, err)
		}
		var buf bytes.Buffer
		if err := s.pages[tmpl].Execute(&buf, data); err != nil {
			s.opts.Logger.Error().Err(err).Str("page", tmpl).Msg("web: template")
			http.Error(w, "the page could not be drawn", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = buf.WriteTo(w)
	}
}

// errorPage is the data of error.html.
type errorPage struct {
	Title, Message string
	Status         int
}

// failure maps a page's error to its status and the error page.
func (s *Server) failure(r *http.Request, err error) (int, string, any) {
	var bad errBadInput
	var missing errNotFound
	var refused errQueryRefused
	var limit errLimit
	switch {
	case errors.As(err, &bad), errors.As(err, &refused), errors.As(err, &limit):
		return http.StatusBadRequest, "error.html", errorPage{"Bad request", err.Error(), http.StatusBadRequest}
	case errors.As(err, &missing):
		return http.StatusNotFound, "error.html", errorPage{"Not found", err.Error(), http.StatusNotFound}
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "error.html", errorPage{"Timeout", "the node did not answer in time", http.StatusGatewayTimeout}
	}
	s.opts.Logger.Warn().Err(err).Str("path", r.URL.Path).Msg("web: page")
	return http.StatusBadGateway, "error.html", errorPage{"The node's answer failed", err.Error(), http.StatusBadGateway}
}

// chart serves the SVG draw writes.
func (s *Server) chart(draw func(r *http.Request) ([]byte, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		svg, err := draw(r)
		if err != nil {
			var bad errBadInput
			status := http.StatusBadGateway
			if errors.As(err, &bad) {
				status = http.StatusBadRequest
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write(svg)
	}
}

// files serves the files of fsys, and nothing for a directory: no listing.
func files(fsys fs.FS) http.Handler {
	serve := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, err := fs.Stat(fsys, r.URL.Path); err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		serve.ServeHTTP(w, r)
	})
}

// favicon serves the view's icon, which pages name (/static/favicon.svg), at the path
// a browser asks when a document names none: a chart or a bundle opened on its own.
func favicon(fsys fs.FS) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, fsys, "favicon.svg")
	}
}

// validatorsJSON serves the genesis validator set (CometBFT's JSON) that a reader pins
// the first time a page checks a proof.
func (s *Server) validatorsJSON(w http.ResponseWriter, r *http.Request) {
	if s.opts.Trusted == nil {
		http.Error(w, "no genesis validator set", http.StatusNotFound)
		return
	}
	b, err := cmtjson.Marshal(s.opts.Trusted)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// Listener is a running web view.
type Listener struct {
	view *Server
	srv  *http.Server
	addr net.Addr
	done chan error
}

// Listen starts serving s on laddr (host:port) and returns once it listens.
func Listen(s *Server, laddr string) (*Listener, error) {
	ln, err := net.Listen("tcp", laddr)
	if err != nil {
		return nil, fmt.Errorf("web view on %s: %w", laddr, err)
	}
	l := &Listener{
		view: s,
		srv: &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: RequestTimeout + 5*time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10},
		addr: ln.Addr(),
		done: make(chan error, 1),
	}
	go func() { l.done <- l.srv.Serve(ln) }()
	return l, nil
}

// Addr is the address the view listens on.
func (l *Listener) Addr() net.Addr { return l.addr }

// Close stops the listener, ends the live streams and waits for the pages being
// served, up to a few seconds.
func (l *Listener) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := errors.Join(l.view.Close(), l.srv.Shutdown(ctx))
	if serveErr := <-l.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
