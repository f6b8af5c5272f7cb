package check

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/proofs"
)

// Pin is what a reader of the web view pinned (a browser: once per origin, at its first
// verification, docs/PROOFS.md): the chain every signed header must be of and the
// validator set that must sign it, its hash the header's validators hash. An empty
// ChainID pins no chain yet: the first verification takes the one its header proves.
type Pin struct {
	ChainID    string
	Validators *cmttypes.ValidatorSet
}

// ErrPinned: a bundle's signed header is of another chain, or names another validator
// set, than the reader pinned.
type ErrPinned struct {
	PinnedChain string
	PinnedSet   []byte
	Chain       string
	Set         []byte
}

func (e ErrPinned) Error() string {
	return fmt.Sprintf("this view pinned chain %s, set %X; the answer's header is of chain %s, set %X",
		Visible(e.PinnedChain), e.PinnedSet, Visible(e.Chain), e.Set)
}

// ErrNotProven: the answer of bundle Bundle (from 0) does not verify: Err is Check's
// error, which the message makes visible (Visible), since it may quote what the bundle
// holds, such as the chain id it claims.
type ErrNotProven struct {
	Bundle int
	Err    error
}

func (e ErrNotProven) Error() string {
	return fmt.Sprintf("bundle %d does not verify: %s", e.Bundle, Visible(e.Err.Error()))
}

func (e ErrNotProven) Unwrap() error { return e.Err }

// ErrStale: the signed header that proves the answers is older than the bound: an old
// state served as the latest one (docs/PROOFS.md, "Height and freshness").
type ErrStale struct {
	Height      int64
	HeaderTime  time.Time
	Age, MaxAge time.Duration
}

func (e ErrStale) Error() string {
	return fmt.Sprintf("the answers are of height %d, whose signed header %d is %s old (at %s), over the %s allowed: an old state",
		e.Height, e.Height+1, e.Age.Round(time.Second), When(e.HeaderTime, time.Time{}), e.MaxAge)
}

// ErrOtherPage: the answers are about another subject than the page the reader is on
// (a page that links another address's bundles, and shows that address's figures).
type ErrOtherPage struct{ Page, Proven string }

func (e ErrOtherPage) Error() string {
	return fmt.Sprintf("this page is %s, its answers are about %s", Visible(e.Page), Visible(e.Proven))
}

// ErrNotOneState: the answers of one proof box are about different states.
type ErrNotOneState struct {
	Heights   [2]int64
	AppHashes [2][]byte
}

func (e ErrNotOneState) Error() string {
	return fmt.Sprintf("the answers are about two states: height %d (app hash %X) and height %d (app hash %X)",
		e.Heights[0], e.AppHashes[0], e.Heights[1], e.AppHashes[1])
}

// Shown is what a page displays of its figures: each name a figure element of the
// proof box carries, with the text of every element that carries it.
type Shown map[string][]string

// Mismatch is a figure the page does not display as proven.
type Mismatch struct {
	Name string
	// Shown is what the page displays; Proven what the proof says ("" when the
	// proof has no such figure: Unproven).
	Shown, Proven string
	// Times is how many elements display the figure: 0, the page does not show it;
	// more than one, it shows it more than once.
	Times int
	// Unproven: the page displays a figure the proof does not have.
	Unproven bool
}

// String names the figure and both texts, the page's made visible (a page's text and
// names are not the view's, and may hold what would reorder the message).
func (m Mismatch) String() string {
	name := Visible(m.Name)
	switch {
	case m.Unproven:
		return fmt.Sprintf("%s: the page showed %q, which the proof does not have", name, Visible(m.Shown))
	case m.Times == 0:
		return fmt.Sprintf("%s: the page does not show it, the proof says %q", name, m.Proven)
	case m.Times > 1 && !anyTimes(m.Name):
		return fmt.Sprintf("%s: the page shows it %d times, the proof says %q once", name, m.Times, m.Proven)
	}
	return fmt.Sprintf("%s: the page showed %q, the proof says %q", name, Visible(m.Shown), m.Proven)
}

// ErrShown: the page displays figures other than the proven ones.
type ErrShown struct{ Mismatches []Mismatch }

func (e ErrShown) Error() string {
	s := make([]string, len(e.Mismatches))
	for i, m := range e.Mismatches {
		s[i] = m.String()
	}
	return strings.Join(s, "; ")
}

// Compare lists, by name, where shown differs from the proven figures: a figure the
// page displays with another text, does not display, or displays more than once
// (FigureChain and FigureHeight: any number of times), and a figure it displays that
// the proof does not have.
func Compare(proven Figures, shown Shown) []Mismatch {
	var out []Mismatch
	for name, want := range proven {
		texts := shown[name]
		if len(texts) != 1 && !anyTimes(name) {
			m := Mismatch{Name: name, Proven: want, Times: len(texts)}
			if len(texts) > 0 {
				m.Shown = texts[0]
			}
			out = append(out, m)
			continue
		}
		for _, t := range texts {
			if t != want {
				out = append(out, Mismatch{Name: name, Shown: t, Proven: want, Times: len(texts)})
				break
			}
		}
	}
	for name, texts := range shown {
		if _, ok := proven[name]; !ok && len(texts) > 0 {
			out = append(out, Mismatch{Name: name, Shown: texts[0], Times: len(texts), Unproven: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Verdict is what Verify found of one proof box's answers.
type Verdict struct {
	// ChainID and SetHash are the chain of the signed header the answers were
	// checked against and the hash of the validator set that signed it: what a first
	// verification pins.
	ChainID string
	SetHash []byte
	// Height is the state the answers are about; AppHash and HeaderTime are those of
	// signed header Height+1, Age how much older than the reader's clock it is.
	Height     int64
	AppHash    []byte
	HeaderTime time.Time
	Age        time.Duration
	// MaxAge is the freshness bound the header was held to.
	MaxAge time.Duration
	// Followed is the number of headers of the longest trace the answers' headers were
	// followed through from the pinned set; 0: they name the pinned set.
	Followed int
	// Figures are the proven figures, written as the page must show them; nil when the
	// answers did not verify.
	Figures Figures
	// Mismatches are where the page displays other figures than the proven ones.
	Mismatches []Mismatch
	// Drawing is the box drawn from the proven answers (Draw), nil when they did not
	// verify; Difference the first place where the page's drawing differs from it.
	Drawing    []Node
	Difference *Difference
}

// Follow returns the set that signed b's header, trusted from pin: the pinned set
// itself, when the header names it; else the set the bundle's trace leads to from the
// pinned set (proofs.VerifyTrace from the pinned set, its last header the bundle's),
// the steps checked at now, the reader's clock. A header of another chain, or one that
// names another set with no trace from the pinned one, is ErrPinned.
func Follow(b Bundle, pin Pin, now time.Time) (*cmttypes.ValidatorSet, error) {
	if pin.Validators == nil {
		return nil, errors.New("no pinned validator set")
	}
	if b.SignedHeader == nil || b.SignedHeader.Header == nil {
		return nil, errors.New("the bundle holds no signed header")
	}
	pinned := pin.Validators.Hash()
	sh := b.SignedHeader
	chain := pin.ChainID
	if chain == "" {
		chain = "(none yet)"
	}
	if pin.ChainID != "" && sh.ChainID != pin.ChainID || (len(b.Trace) == 0 && !bytes.Equal(sh.ValidatorsHash, pinned)) {
		return nil, ErrPinned{PinnedChain: chain, PinnedSet: pinned, Chain: sh.ChainID, Set: sh.ValidatorsHash}
	}
	if len(b.Trace) == 0 {
		return pin.Validators, nil
	}
	if first := b.Trace[0]; first == nil || first.SignedHeader == nil || first.Header == nil || !bytes.Equal(first.ValidatorsHash, pinned) {
		var set []byte
		if first != nil && first.SignedHeader != nil && first.Header != nil {
			set = first.ValidatorsHash
		}
		return nil, ErrPinned{PinnedChain: chain, PinnedSet: pinned, Chain: sh.ChainID, Set: set}
	}
	last, err := proofs.VerifyTrace(sh.ChainID, pin.Validators, b.Trace, now, 0)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(last.Hash(), sh.Hash()) {
		return nil, fmt.Errorf("the trace leads to header %d %X, the answer's is %d %X", last.Height, last.Hash(), sh.Height, sh.Hash())
	}
	return last.ValidatorSet, nil
}

// Verify checks the bundles of one proof box of a page, in this order: each bundle's
// signed header is of the pinned chain and names the pinned validator set, or the
// bundle's trace leads to it from a header the pinned set signed (Follow;
// ErrPinned), each answer verifies against the set that signed its header (Check;
// ErrNotProven), all are about one
// state (one height, one app hash: ErrNotOneState), whose signed header is at most
// maxAge older than now, the reader's clock (ErrStale; zero: proofs.DefaultMaxAge, the
// client's bound; negative: no bound); then it reads their figures (Read), checks
// that they are about the page the reader is on, path page (ErrOtherPage; "": on no
// page, as a tool that checks a page's bundles), draws the box from them (Draw), and
// compares that with shown, the page's drawing of the box: first its figures (ErrShown),
// then the whole drawing, labels, units, links and bars (ErrDrawing). The verdict holds
// the proven figures and drawing once the answers verify.
func Verify(bundles []Bundle, pin Pin, now time.Time, maxAge time.Duration, page string, shown []Node) (Verdict, error) {
	var v Verdict
	if len(bundles) == 0 {
		return v, errors.New("no proof bundle")
	}
	if pin.Validators == nil {
		return v, errors.New("no pinned validator set")
	}
	v.SetHash = pin.Validators.Hash()
	list := make([]Answer, len(bundles))
	for i, b := range bundles {
		sh := b.SignedHeader
		if sh == nil || sh.Header == nil {
			return v, fmt.Errorf("bundle %d holds no signed header", i)
		}
		signers, err := Follow(b, pin, now)
		if err != nil {
			var pinned ErrPinned
			if errors.As(err, &pinned) {
				return v, err
			}
			return v, ErrNotProven{Bundle: i, Err: err}
		}
		v.Followed = max(v.Followed, len(b.Trace))
		r, err := Check(b, signers)
		if err != nil {
			return v, ErrNotProven{Bundle: i, Err: err}
		}
		if i == 0 {
			v.ChainID, v.Height, v.AppHash, v.HeaderTime = sh.ChainID, r.Height, r.AppHash, r.Time
		} else if r.Height != v.Height || !bytes.Equal(r.AppHash, v.AppHash) || sh.ChainID != v.ChainID {
			return v, ErrNotOneState{Heights: [2]int64{v.Height, r.Height}, AppHashes: [2][]byte{v.AppHash, r.AppHash}}
		}
		list[i] = AnswerOf(b.Path, b.Data, b.Response)
	}
	v.Age, v.MaxAge = now.Sub(v.HeaderTime), maxAge
	if maxAge == 0 {
		v.MaxAge = proofs.DefaultMaxAge
	}
	if v.MaxAge > 0 && v.Age > v.MaxAge {
		return v, ErrStale{Height: v.Height, HeaderTime: v.HeaderTime, Age: v.Age, MaxAge: v.MaxAge}
	}
	f, sorted, links, err := read(v.ChainID, list)
	if err != nil {
		return v, err
	}
	if want := sorted.page(); page != "" && !samePage(page, want) {
		return v, ErrOtherPage{Page: page, Proven: want}
	}
	v.Figures, v.Drawing = f, draw(sorted.kind(), f, links)
	if v.Mismatches = Compare(f, ShownOf(shown)); len(v.Mismatches) > 0 {
		return v, ErrShown{Mismatches: v.Mismatches}
	}
	if v.Difference = CompareDrawing(v.Drawing, shown); v.Difference != nil {
		return v, ErrDrawing{*v.Difference}
	}
	return v, nil
}
