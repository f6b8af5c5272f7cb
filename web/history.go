package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"
)

// A history is what the chain did that touched one subject (an account, a document,
// the chain itself), newest first: the union of a few searches of CometBFT's indexes,
// each a query of indexed attributes (protocol.Searched) of the transaction index
// (tx_search) or of the block index (block_search, the blocks whose own events match).
// CometBFT's query language has no "or", so a list of what any of several attributes
// names is several searches merged.
//
// Its pages are cut by cursors, never by page numbers: history grows at the top, and
// a cursor names a place in what is already written. Every search is read at heights
// at or below the cursor's; what each has shown of that height is counted in the
// cursor (CometBFT orders a search's rows by height, then by position in the block,
// both descending), so the next page goes on from there however much the chain grew
// meanwhile.

// search is one search of a history.
type search struct {
	// blocks: the block index (a row is a block whose own events match); otherwise
	// the transaction index.
	blocks bool
	// query is the search's conditions in CometBFT's query language.
	query string
}

// hit is one row a search found: a transaction, or a block whose events match.
type hit struct {
	height int64
	// index is the transaction's position in its block; -1 for a block.
	index int
	tx    *coretypes.ResultTx
}

// after reports whether h comes after o in a history, newest first: a higher block
// first, and within a block its own events (which follow its transactions) before
// its transactions, the last first.
func (h hit) after(o hit) bool {
	if h.height != o.height {
		return h.height > o.height
	}
	return after(h.index, o.index)
}

func after(i, j int) bool {
	if i < 0 || j < 0 {
		return i < 0 && j >= 0
	}
	return i > j
}

// cursor is a place in a history: the rows of heights at or below height, less the
// first skip[i] of search i (all of them at height itself). The zero cursor is the
// top.
type cursor struct {
	height int64
	skip   []int
}

// MaxCursorSkip bounds what a cursor skips of one search: more rows than one block
// holds never touch one subject.
const MaxCursorSkip = 1 << 20

// String is the cursor as the pages' links and the API carry it: the height, then
// each search's skip, dot-separated.
func (c cursor) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(c.height, 10))
	for _, s := range c.skip {
		b.WriteByte('.')
		b.WriteString(strconv.Itoa(s))
	}
	return b.String()
}

// cursorOf reads ?cursor= of a history of n searches ("" is the top).
func cursorOf(r *http.Request, n int) (cursor, error) {
	v := r.URL.Query().Get("cursor")
	c := cursor{skip: make([]int, n)}
	if v == "" {
		return c, nil
	}
	bad := errBadInput{"cursor", v, "a cursor from a page's next link"}
	parts := strings.Split(v, ".")
	if len(parts) != n+1 {
		return c, bad
	}
	h, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || h < 1 {
		return c, bad
	}
	c.height = h
	for i, p := range parts[1:] {
		if c.skip[i], err = strconv.Atoi(p); err != nil || c.skip[i] < 0 || c.skip[i] > MaxCursorSkip {
			return c, bad
		}
	}
	return c, nil
}

// listArgs reads a list's ?cursor= (of a history of n searches) and ?limit=, and
// keeps a limit other than DefaultLimit in q, the query the list's next link carries.
func listArgs(r *http.Request, n int, q url.Values) (cursor, int, error) {
	c, err := cursorOf(r, n)
	if err != nil {
		return c, 0, err
	}
	limit, err := limitOf(r)
	if err != nil {
		return c, 0, err
	}
	if limit != DefaultLimit {
		q.Set("limit", strconv.Itoa(limit))
	}
	return c, limit, nil
}

// DefaultLimit and MaxLimit are the rows a list's page holds unless ?limit= says, and
// the most it may ask: CometBFT's searches answer no more than MaxLimit at once.
const (
	DefaultLimit = ListPerPage
	MaxLimit     = MaxSearchPage
)

// limitOf reads ?limit= (absent: DefaultLimit).
func limitOf(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, errBadInput{"limit", v, fmt.Sprintf("a number of rows from 1 to %d", MaxLimit)}
	}
	if n > MaxLimit {
		return 0, errLimit{n, MaxLimit}
	}
	return n, nil
}

// errLimit: a page asked for more rows than a list gives at once.
type errLimit struct{ Asked, Max int }

func (e errLimit) Error() string {
	return fmt.Sprintf("limit %d: at most %d rows a page", e.Asked, e.Max)
}

// MaxScan bounds the rows a page reads when a filter (keep) leaves some out: a page
// that reads that many ends there, with fewer rows than asked and the cursor of the
// rest.
const MaxScan = 10 * MaxLimit

// history returns up to limit rows of the union of searches from c on that keep
// (nil: every row) keeps, and the cursor of the rows after them ("" when there are
// none). A transaction several searches find is one row.
func (s *Server) history(ctx context.Context, searches []search, c cursor, limit int, keep func(hit) bool) ([]hit, string, error) {
	on, err := s.indexing(ctx)
	if err != nil {
		return nil, "", err
	}
	if !on {
		return nil, "", errNoIndex
	}
	latest, err := s.latestHeight(ctx)
	if err != nil {
		return nil, "", err
	}
	top := c.height
	if top == 0 || top > latest {
		top, c = latest, cursor{skip: make([]int, len(searches))} // a cursor past the chain's top is its top
	}
	streams := make([]*stream, len(searches))
	heads := make([][]hit, len(searches))
	for i, q := range searches {
		streams[i] = newStream(q, top, c.skip[i])
	}
	var rows []hit
	var last hit
	taken := make([]int, len(searches)) // of each search, the rows taken at last's height
	for scanned := 0; len(rows) < limit && scanned < MaxScan; scanned++ {
		first := -1
		for i, st := range streams {
			if len(heads[i]) == 0 && !st.done {
				if heads[i], err = st.next(ctx, s, limit); err != nil {
					return nil, "", err
				}
			}
			if len(heads[i]) > 0 && (first < 0 || heads[i][0].after(heads[first][0])) {
				first = i
			}
		}
		if first < 0 {
			break
		}
		row := heads[first][0]
		if scanned > 0 && last.height != row.height {
			clear(taken)
		}
		for i, h := range heads {
			if len(h) > 0 && h[0].height == row.height && h[0].index == row.index {
				heads[i] = h[1:]
				taken[i]++
			}
		}
		last = row
		if keep == nil || keep(row) {
			rows = append(rows, row)
		}
	}
	left := false
	for i, st := range streams {
		left = left || len(heads[i]) > 0 || !st.done
	}
	if !left || last.height == 0 {
		return rows, "", nil
	}
	next := cursor{height: last.height, skip: taken}
	if last.height == c.height {
		for i := range next.skip {
			next.skip[i] += c.skip[i]
		}
	}
	return rows, next.String(), nil
}

// FirstWindow is how many heights a search reads first. CometBFT's index loads every
// row a query matches (each transaction's result) to sort them before it cuts a page,
// so a search of the whole chain costs every row its subject ever had: a stream reads
// its search in windows of heights instead, newest first, each twice as wide as the
// one before, until it has the rows a page needs.
const FirstWindow = 4

// stream reads one search, newest first, in windows of heights.
type stream struct {
	q search
	// The window [lo, hi], its width, and the rows of it read.
	lo, hi int64
	width  int64
	offset int
	// done: every window down to the first height is read.
	done bool
}

// newStream is a stream of q from height top on, the first skip rows of it left out
// (all of them at top).
func newStream(q search, top int64, skip int) *stream {
	return &stream{q: q, hi: top, lo: max(1, top-FirstWindow+1), width: FirstWindow, offset: skip, done: top < 1}
}

// next reads up to n rows after those read; none once it is done.
func (st *stream) next(ctx context.Context, s *Server, n int) ([]hit, error) {
	for !st.done {
		rows, total, err := s.searchWindow(ctx, st.q, st.lo, st.hi, st.offset, n)
		if err != nil {
			return nil, err
		}
		st.offset += len(rows)
		if st.offset >= total {
			if st.lo <= 1 {
				st.done = true
			} else {
				st.width *= 2
				st.hi, st.offset = st.lo-1, 0
				st.lo = max(1, st.hi-st.width+1)
			}
		}
		if len(rows) > 0 {
			return rows, nil
		}
	}
	return nil, nil
}

// searchWindow reads up to n rows of q at heights lo to hi, from the skip-th on, and
// how many the window holds.
func (s *Server) searchWindow(ctx context.Context, q search, lo, hi int64, skip, n int) ([]hit, int, error) {
	key := "tx.height"
	if q.blocks {
		key = "block.height"
	}
	query := fmt.Sprintf("%s >= %d AND %s <= %d", key, lo, key, hi)
	if q.query != "" {
		query = q.query + " AND " + query
	}
	// One page of CometBFT's holds the rows wanted when they are within the first
	// MaxSearchPage; further down, pages of MaxSearchPage, from the one skip falls in.
	per := skip + n
	page := 1
	if per > MaxSearchPage {
		per, page = MaxSearchPage, skip/MaxSearchPage+1
	}
	from := skip - (page-1)*per
	var out []hit
	for {
		rows, total, err := s.searchPage(ctx, q.blocks, query, page, per)
		if err != nil {
			return nil, 0, err
		}
		if from < len(rows) {
			out = append(out, rows[from:]...)
		}
		from = 0
		if len(out) >= n || page*per >= total {
			if len(out) > n {
				out = out[:n]
			}
			return out, total, nil
		}
		page++
	}
}

// searchPage is page (from 1) of per rows of a search, newest first, and how many
// rows it has; no rows for a page past the last.
func (s *Server) searchPage(ctx context.Context, blocks bool, query string, page, per int) ([]hit, int, error) {
	if blocks {
		res, err := s.rpc.BlockSearch(ctx, query, &page, &per, "desc")
		if err != nil {
			return s.pastTheLast(ctx, blocks, query, page, err)
		}
		out := make([]hit, len(res.Blocks))
		for i, b := range res.Blocks {
			out[i] = hit{height: b.Block.Height, index: -1}
		}
		return out, res.TotalCount, nil
	}
	res, err := s.rpc.TxSearch(ctx, query, false, &page, &per, "desc")
	if err != nil {
		return s.pastTheLast(ctx, blocks, query, page, err)
	}
	out := make([]hit, len(res.Txs))
	for i, t := range res.Txs {
		out[i] = hit{height: t.Height, index: int(t.Index), tx: t}
	}
	return out, res.TotalCount, nil
}

// pastTheLast answers a page CometBFT refused: past the last page (which it refuses
// rather than answering empty) it is empty; otherwise the refusal stands.
func (s *Server) pastTheLast(ctx context.Context, blocks bool, query string, page int, err error) ([]hit, int, error) {
	if page == 1 {
		return nil, 0, err
	}
	one := 1
	var total int
	if blocks {
		res, ferr := s.rpc.BlockSearch(ctx, query, &one, &one, "desc")
		if ferr != nil {
			return nil, 0, err
		}
		total = res.TotalCount
	} else {
		res, ferr := s.rpc.TxSearch(ctx, query, false, &one, &one, "desc")
		if ferr != nil {
			return nil, 0, err
		}
		total = res.TotalCount
	}
	return nil, total, nil
}
