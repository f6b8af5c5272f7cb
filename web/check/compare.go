package check

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// DifferenceKind is how a page's drawing of a box differs from the check's.
type DifferenceKind int

const (
	// DiffMissing: the page lacks a node the check draws (a label, a figure, a bar).
	DiffMissing DifferenceKind = iota + 1
	// DiffExtra: the page holds a node the check does not draw (a typed ✓, a second
	// text beside a figure).
	DiffExtra
	// DiffTag: the page has another element where the check draws one.
	DiffTag
	// DiffText: the page has another text (a label swapped for another, a unit).
	DiffText
	// DiffAttr: an element's attribute differs (a link's target, a bar's name or
	// size, a figure's name), or the page adds one (a style, hidden).
	DiffAttr
	// DiffHidden: the page does not display an element the check draws.
	DiffHidden
	// DiffGenerated: the page's style generates text in an element (CSS content).
	DiffGenerated
)

var differenceNames = map[DifferenceKind]string{
	DiffMissing: "lacks", DiffExtra: "adds", DiffTag: "has another element", DiffText: "has another text",
	DiffAttr: "has another attribute", DiffHidden: "does not display", DiffGenerated: "generates text with its style",
}

func (k DifferenceKind) String() string { return differenceNames[k] }

// Difference is the first place, in document order, where a page's drawing of a box
// differs from the check's.
type Difference struct {
	Kind DifferenceKind
	// Path is where: each node from the box down, its tag (#text for a text) and
	// which of its parent's children of that tag it is (dl[1]/dd[4]/bdi[1]).
	Path string
	// Figure is the figure the difference is in ("" when it is in none); After, when
	// it is in none, the last figure before it ("" when none is).
	Figure, After string
	// Attr is the attribute that differs (DiffAttr).
	Attr string
	// Shown is what the page has there, Drawn what the check draws ("" when either has
	// nothing).
	Shown, Drawn string
}

// ErrDrawing: the page draws a proof box otherwise than the check draws it from the
// proven answers.
type ErrDrawing struct{ Difference }

func (e ErrDrawing) Error() string {
	d := e.Difference
	where := Visible(d.Path)
	switch {
	case d.Figure != "":
		where += ", in figure " + Visible(d.Figure)
	case d.After != "":
		where += ", after figure " + Visible(d.After)
	}
	switch d.Kind {
	case DiffAttr:
		return fmt.Sprintf("the page's drawing of this box %s %s at %s: %q, the check draws %q", d.Kind, Visible(d.Attr), where, Visible(d.Shown), Visible(d.Drawn))
	case DiffHidden, DiffMissing:
		return fmt.Sprintf("the page's drawing of this box %s %q at %s", d.Kind, Visible(d.Drawn), where)
	case DiffExtra, DiffGenerated:
		return fmt.Sprintf("the page's drawing of this box %s %q at %s", d.Kind, Visible(d.Shown), where)
	}
	return fmt.Sprintf("the page's drawing of this box %s at %s: %q, the check draws %q", d.Kind, where, Visible(d.Shown), Visible(d.Drawn))
}

// CompareDrawing returns the first difference between drawn, a box's drawing from its
// answers, and shown, the drawing a page displays (read from its DOM); nil when they
// are the same: the same elements with the same attributes and texts, in the same
// order, each displayed and none with text its style generates.
func CompareDrawing(drawn, shown []Node) *Difference {
	c := comparison{}
	return c.nodes("", "", drawn, shown)
}

// comparison walks two drawings, the last figure it walked through in last.
type comparison struct{ last string }

// nodes compares the children drawn and shown of the element at path, inside figure
// in ("" when in none).
func (c *comparison) nodes(path, in string, drawn, shown []Node) *Difference {
	count := map[string]int{}
	for i := 0; i < max(len(drawn), len(shown)); i++ {
		var step string
		switch {
		case i < len(drawn):
			step = stepOf(drawn[i], count)
		default:
			step = stepOf(shown[i], count)
		}
		at := strings.TrimPrefix(path+"/"+step, "/")
		switch {
		case i >= len(shown):
			return c.difference(Difference{Kind: DiffMissing, Path: at, Figure: figureOf(drawn[i], in), Drawn: summary(drawn[i])})
		case i >= len(drawn):
			return c.difference(Difference{Kind: DiffExtra, Path: at, Figure: in, Shown: summary(shown[i])})
		}
		if d := c.node(at, in, drawn[i], shown[i]); d != nil {
			return d
		}
	}
	return nil
}

// stepOf is node n's step in a path, counting the nodes of its tag before it.
func stepOf(n Node, count map[string]int) string {
	tag := n.Tag
	if tag == "" {
		tag = "#text" // as the DOM names a text node
	}
	count[tag]++
	return fmt.Sprintf("%s[%d]", tag, count[tag])
}

// figureOf is the figure n is, else in, the one it is inside.
func figureOf(n Node, in string) string {
	if name, ok := n.Attrs["data-figure"]; ok {
		return name
	}
	return in
}

// difference is d, said after the last figure walked through when it is in none.
func (c *comparison) difference(d Difference) *Difference {
	if d.Figure == "" {
		d.After = c.last
	}
	return &d
}

func (c *comparison) node(at, in string, drawn, shown Node) *Difference {
	fig := figureOf(drawn, in)
	switch {
	case shown.Hidden:
		return c.difference(Difference{Kind: DiffHidden, Path: at, Figure: fig, Drawn: summary(drawn)})
	case shown.Generated != "":
		return c.difference(Difference{Kind: DiffGenerated, Path: at, Figure: fig, Shown: shown.Generated})
	case drawn.Tag != shown.Tag:
		return c.difference(Difference{Kind: DiffTag, Path: at, Figure: fig, Shown: summary(shown), Drawn: summary(drawn)})
	case drawn.Tag == "" && drawn.Text != shown.Text:
		return c.difference(Difference{Kind: DiffText, Path: at, Figure: fig, Shown: shown.Text, Drawn: drawn.Text})
	}
	names := map[string]bool{}
	for name := range drawn.Attrs {
		names[name] = true
	}
	for name := range shown.Attrs {
		names[name] = true
	}
	sorted := make([]string, 0, len(names))
	for name := range names {
		sorted = append(sorted, name)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		want, drawnHas := drawn.Attrs[name]
		got, shownHas := shown.Attrs[name]
		if want != got || drawnHas != shownHas {
			return c.difference(Difference{Kind: DiffAttr, Path: at, Figure: fig, Attr: name, Shown: got, Drawn: want})
		}
	}
	if d := c.nodes(at, fig, drawn.Kids, shown.Kids); d != nil {
		return d
	}
	if fig != in {
		c.last = fig
	}
	return nil
}

// summary is a node as a difference names it: a text, or an element's tag and its
// text, cut at 80 characters.
func summary(n Node) string {
	if n.Tag == "" {
		return n.Text
	}
	s := "<" + n.Tag + "> " + textOf(n)
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:79]) + "…"
	}
	return s
}

// textOf is the text of n and all its children, as a DOM's textContent.
func textOf(n Node) string {
	if n.Tag == "" {
		return n.Text
	}
	var b strings.Builder
	for _, k := range n.Kids {
		b.WriteString(textOf(k))
	}
	return b.String()
}

// ShownOf is what a page's drawing of a box displays of its figures: the text of
// every element that carries a figure's name, by name.
func ShownOf(nodes []Node) Shown {
	s := Shown{}
	var walk func([]Node)
	walk = func(nodes []Node) {
		for _, n := range nodes {
			if name, ok := n.Attrs["data-figure"]; ok {
				s[name] = append(s[name], textOf(n))
			}
			walk(n.Kids)
		}
	}
	walk(nodes)
	return s
}
