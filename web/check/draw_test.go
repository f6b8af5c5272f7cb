package check

import (
	"encoding/json"
	"strings"
	"testing"
)

// boxes are the figures (and links) of one box of each kind, as read would write them.
var boxes = map[boxKind]struct {
	f     Figures
	links map[string]string
	// hrefs are links the drawing must hold, by the figure inside them.
	hrefs map[string]string
}{
	boxOverview: {f: Figures{"chain": "ttld-test", "height": "7", "protocol-version": "16", "next-version": "none decided",
		"upgrade-signals": "0 of the 7 blocks of epoch 0 so far signalled 17 or later", "epoch": "0, from height 1",
		"storage-pool": "12", "lifetime-pools": "3", "pending-refunds": "0", "backlog": "0", "total-credits": "10,000",
		"supply": "10,000", "conserved": "conserved", "block-time": "2026-01-02 03:04:05 UTC"},
		hrefs: map[string]string{"epoch": "/epochs"}},
	boxIdentity: {f: Figures{"chain": "c", "height": "7", "id": "ab", "balance": "1,000", "nonce": "3", "key.0": "0: 01", "key.1": "1: 02"}},
	boxAddress: {f: Figures{"chain": "c", "height": "7", "address": "aa", "balance": "5", "nonce": "1", "since": "1",
		"change.0.heights": "2–4", "change.0.balance": "9", "change.1.heights": "6", "change.1.balance": "5", "changes-cut": "more"},
		links: map[string]string{"change.0.heights": "/block/4", "change.1.heights": "/block/6"},
		hrefs: map[string]string{"change.0.heights": "/block/4", "change.1.heights": "/block/6"}},
	boxContract: {f: Figures{"chain": "c", "height": "7", "id": "cc", "owner": "oo", "version": "1", "moderator.0": "mm", "protocol-version": "16",
		"type.0.name": "note", "type.0.ttl": "2m0s", "type.0.flags": "defaults",
		"type.0.property.0.position": "0", "type.0.property.0.name": "text", "type.0.property.0.type": "string",
		"type.0.property.0.required": "", "type.0.property.0.refers": "",
		"type.0.index.0.name": "byText", "type.0.index.0.properties": "text asc", "type.0.index.0.flags": "", "type.0.index.0.time-range": "",
		"definition": "{}"},
		links: map[string]string{"type.0.name": "/documents/cc/note"},
		hrefs: map[string]string{"owner": "/identity/oo", "moderator.0": "/identity/mm"}},
	boxDocument: {f: Figures{"chain": "c", "height": "7", "id": "dd", "contract": "cc", "type": "note", "owner": "oo", "revision": "2",
		"created": "then", "updated": "then", "renewed": "later", "expiry": "expires at soon", "lifetime": "40%", "renewal": "25%",
		"field.0.name": "text", "field.0.value": "hello", "block-time": "now", "protocol-version": "16"},
		hrefs: map[string]string{"contract": "/contract/cc", "owner": "/identity/oo"}},
	boxDocuments: {f: Figures{"chain": "c", "height": "7", "contract": "cc", "type": "note", "query": "{}", "block-time": "now", "count": "1",
		"doc.0.id": "d1…d1", "doc.0.owner": "o1…o1", "doc.0.revision": "1", "doc.0.created": "then", "doc.0.expiry": "expires at soon",
		"doc.0.field.0.name": "text", "doc.0.field.0.value": "hi"},
		links: map[string]string{"doc.0.id": "/document/cc/note/d1", "doc.0.owner": "/identity/o1"},
		hrefs: map[string]string{"contract": "/contract/cc", "doc.0.id": "/document/cc/note/d1", "doc.0.owner": "/identity/o1"}},
	boxValidator: {f: Figures{"chain": "c", "height": "7", "validator": "VV", "payout-identity": "pp"},
		hrefs: map[string]string{"payout-identity": "/identity/pp"}},
	boxValidators: {f: Figures{"chain": "c", "height": "7", "validators": "1, total power 10",
		"validator.0.address": "VV", "validator.0.power": "10 (100.00%)", "validator.0.operator": "oo",
		"proposals": "1", "proposal.0.id": "1", "proposal.0.change": "remove VV", "proposal.0.proposer": "VV",
		"proposal.0.approvals": "1", "proposal.0.state": "passed", "evidence": "1", "evidence.0.validator": "VV", "evidence.0.what": "duplicate vote"},
		hrefs: map[string]string{"validator.0.address": "/validator/VV", "validator.0.operator": "/identity/oo"}},
	boxEpochs: {f: Figures{"chain": "c", "height": "7", "epoch": "1, from height 5", "epoch-length": "60 s", "storage-pool": "3",
		"epoch.1.index": "1", "epoch.1.start": "t1", "epoch.1.fees": "2", "epoch.1.storage": "1", "epoch.1.payout": "not yet",
		"epoch.0.index": "0", "epoch.0.start": "t0", "epoch.0.fees": "2", "epoch.0.storage": "1", "epoch.0.payout": "paid 3",
		"epoch.0.proposer.0.address": "AB…CD", "epoch.0.proposer.0.blocks": "4"}},
}

// hrefOf returns the href of the link around figure name in nodes ("" when none).
func hrefOf(nodes []Node, name, around string) string {
	for _, n := range nodes {
		if n.Attrs["data-figure"] == name {
			return around
		}
		inside := around
		if n.Tag == "a" {
			inside = n.Attrs["href"]
		}
		if h := hrefOf(n.Kids, name, inside); h != "" {
			return h
		}
	}
	return ""
}

// TestDrawEveryBox: the drawing of each kind of box shows each of its figures exactly
// once (the chain and the height as its page shows them) and no other, links them
// where its page does, writes as HTML, and is the same drawing compared with itself.
func TestDrawEveryBox(t *testing.T) {
	for kind, box := range boxes {
		nodes := draw(kind, box.f, box.links)
		shown := ShownOf(nodes)
		for name := range box.f {
			if len(shown[name]) == 0 && !anyTimes(name) {
				t.Errorf("box %d: figure %s not drawn", kind, name)
			}
		}
		if m := Compare(box.f, shown); len(m) > 0 && !(len(m) == 1 && m[0].Name == FigureChain && m[0].Times == 0) {
			t.Errorf("box %d: the drawing's figures differ from the box's: %+v", kind, m)
		}
		for name, want := range box.hrefs {
			if got := hrefOf(nodes, name, ""); got != want {
				t.Errorf("box %d: figure %s links %q, want %q", kind, name, got, want)
			}
		}
		var b strings.Builder
		if err := WriteHTML(&b, nodes); err != nil || !strings.Contains(b.String(), `data-figure="height"`) {
			t.Errorf("box %d: HTML %q: %v", kind, b.String(), err)
		}
		if d := CompareDrawing(nodes, nodes); d != nil {
			t.Errorf("box %d: the drawing differs from itself: %+v", kind, d)
		}
	}
	// The epochs are drawn newest first, as the page lists them.
	nodes := draw(boxEpochs, boxes[boxEpochs].f, nil)
	if got := ShownOf(nodes); got["epoch.1.index"] == nil || strings.Index(textOf(Node{Tag: "div", Kids: nodes}), "t1") > strings.Index(textOf(Node{Tag: "div", Kids: nodes}), "t0") {
		t.Errorf("the epochs are not drawn newest first: %q", textOf(Node{Tag: "div", Kids: nodes}))
	}
}

// TestDrawingBars: the document's lifetime bar is as wide as the lifetime figure and
// its renewal mark where the renewal figure says, coloured as expired when it is.
func TestDrawingBars(t *testing.T) {
	f := boxes[boxDocument].f
	bars := map[string]map[string]string{}
	var walk func([]Node)
	walk = func(nodes []Node) {
		for _, n := range nodes {
			if name := n.Attrs["data-bar"]; name != "" && n.Tag != "text" {
				bars[name] = n.Attrs
			}
			walk(n.Kids)
		}
	}
	walk(draw(boxDocument, f, nil))
	if bars["lifetime"]["width"] != "400" || bars["lifetime"]["fill"] != "#1f5fa8" || bars["renewal"]["x1"] != "250" || bars["renewal"]["x2"] != "250" {
		t.Errorf("the bars: %v", bars)
	}
	expired := Figures{}
	for k, v := range f {
		expired[k] = v
	}
	expired["expiry"], expired["lifetime"] = "expired at then, waiting for cleanup", "100%"
	delete(expired, "renewal")
	delete(expired, "renewed")
	bars = map[string]map[string]string{}
	walk(draw(boxDocument, expired, nil))
	if bars["lifetime"]["width"] != "1000" || bars["lifetime"]["fill"] != "#c04e1a" || bars["renewal"] != nil {
		t.Errorf("the bars of an expired document: %v", bars)
	}
	for text, want := range map[string]int{"0%": 0, "37%": 370, "100%": 1000, "101%": -1, "37": -1, "": -1, "-1%": -1} {
		if got := BarX(text); got != want {
			t.Errorf("BarX(%q) = %d, want %d", text, got, want)
		}
	}
}

// copyOf is a deep copy of nodes.
func copyOf(t *testing.T, nodes []Node) []Node {
	t.Helper()
	raw, err := json.Marshal(nodes)
	if err != nil {
		t.Fatal(err)
	}
	var out []Node
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// find returns the first node of nodes (depth first) for which match holds.
func find(nodes []Node, match func(Node) bool) *Node {
	for i := range nodes {
		if match(nodes[i]) {
			return &nodes[i]
		}
		if n := find(nodes[i].Kids, match); n != nil {
			return n
		}
	}
	return nil
}

func isFigure(name string) func(Node) bool {
	return func(n Node) bool { return n.Attrs["data-figure"] == name }
}

// TestCompareDrawingAttacks: a page's drawing that differs from the check's in any way
// an attacker would, with every figure's text still the proven one, is found, the
// first difference named with its kind, its place, the figure it is in or follows, and
// both sides.
func TestCompareDrawingAttacks(t *testing.T) {
	identity := draw(boxIdentity, boxes[boxIdentity].f, nil)
	document := draw(boxDocument, boxes[boxDocument].f, nil)
	dt := func(label string) func(Node) bool {
		return func(n Node) bool { return n.Tag == "dt" && textOf(n) == label }
	}
	for name, c := range map[string]struct {
		drawn  []Node
		attack func(page []Node)
		want   Difference
	}{
		"labels swapped": {identity, func(page []Node) {
			b, n := find(page, dt("Balance")), find(page, dt("Last nonce"))
			b.Kids, n.Kids = n.Kids, b.Kids
		}, Difference{Kind: DiffText, Path: "dl[1]/dt[2]/#text[1]", After: "id", Shown: "Last nonce", Drawn: "Balance"}},
		"a typed ✓ beside a figure": {identity, func(page []Node) {
			dd := find(page, func(n Node) bool { return n.Attrs["id"] == "balance" })
			dd.Kids[1].Text = " credits ✓"
		}, Difference{Kind: DiffText, Path: "dl[1]/dd[2]/#text[1]", After: "balance", Shown: " credits ✓", Drawn: " credits"}},
		"the proven figure hidden, a lie beside it": {identity, func(page []Node) {
			dd := find(page, func(n Node) bool { return n.Attrs["id"] == "balance" })
			dd.Kids[0].Hidden = true
			dd.Kids = append(dd.Kids, Node{Tag: "span", Kids: []Node{{Text: "9,999,000 credits ✓"}}})
		}, Difference{Kind: DiffHidden, Path: "dl[1]/dd[2]/bdi[1]", Figure: "balance", Drawn: "<bdi> 1,000"}},
		"an element added": {identity, func(page []Node) {
			dd := find(page, func(n Node) bool { return n.Attrs["id"] == "balance" })
			dd.Kids = append(dd.Kids, Node{Tag: "span", Kids: []Node{{Text: "✓"}}})
		}, Difference{Kind: DiffExtra, Path: "dl[1]/dd[2]/span[1]", After: "balance", Shown: "<span> ✓"}},
		"text from the style": {identity, func(page []Node) {
			find(page, isFigure("nonce")).Generated = `" ✓ verified"`
		}, Difference{Kind: DiffGenerated, Path: "dl[1]/dd[3]/bdi[1]", Figure: "nonce", Shown: `" ✓ verified"`}},
		"a style added": {identity, func(page []Node) {
			n := find(page, isFigure("balance"))
			n.Attrs["style"] = "display:none"
		}, Difference{Kind: DiffAttr, Path: "dl[1]/dd[2]/bdi[1]", Figure: "balance", Attr: "style", Shown: "display:none"}},
		"a bar renamed": {document, func(page []Node) {
			find(page, func(n Node) bool { return n.Attrs["data-bar"] == "lifetime" }).Attrs["data-bar"] = "lifetime-old"
		}, Difference{Kind: DiffAttr, Path: "div[1]/svg[1]/rect[2]", After: "protocol-version", Attr: "data-bar", Shown: "lifetime-old", Drawn: "lifetime"}},
		"a bar resized": {document, func(page []Node) {
			find(page, func(n Node) bool { return n.Attrs["data-bar"] == "lifetime" }).Attrs["width"] = "900"
		}, Difference{Kind: DiffAttr, Path: "div[1]/svg[1]/rect[2]", After: "protocol-version", Attr: "width", Shown: "900", Drawn: "400"}},
		"a bar left out": {document, func(page []Node) {
			svg := find(page, func(n Node) bool { return n.Tag == "svg" })
			svg.Kids = svg.Kids[:1]
		}, Difference{Kind: DiffMissing, Path: "div[1]/svg[1]/rect[2]", After: "protocol-version", Drawn: "<rect> "}},
		"a link pointed elsewhere": {document, func(page []Node) {
			find(page, func(n Node) bool { return n.Tag == "a" && n.Attrs["href"] == "/identity/oo" }).Attrs["href"] = "/identity/ee"
		}, Difference{Kind: DiffAttr, Path: "dl[1]/dd[3]/a[1]", After: "contract", Attr: "href", Shown: "/identity/ee", Drawn: "/identity/oo"}},
		"a figure left out": {document, func(page []Node) {
			dd := find(page, func(n Node) bool { return n.Attrs["id"] == "expiry" })
			dd.Kids = nil
		}, Difference{Kind: DiffMissing, Path: "dl[1]/dd[8]/bdi[1]", Figure: "expiry", Drawn: "<bdi> expires at soon"}},
	} {
		page := copyOf(t, c.drawn)
		c.attack(page)
		d := CompareDrawing(c.drawn, page)
		if d == nil || *d != c.want {
			t.Errorf("%s: %+v, want %+v", name, d, c.want)
			continue
		}
		if err := (ErrDrawing{*d}); !strings.Contains(err.Error(), d.Kind.String()) {
			t.Errorf("%s: the message %q does not say what differs", name, err)
		}
	}
}

// TestWriteHTML: a drawing writes its texts and attributes escaped, and refuses an
// element, an attribute or a link a drawing may not hold.
func TestWriteHTML(t *testing.T) {
	var b strings.Builder
	if err := WriteHTML(&b, []Node{el("p", text(`<a href="x">&'`)).attr("class", `"q"`)}); err != nil ||
		b.String() != `<p class="&#34;q&#34;">&lt;a href=&#34;x&#34;&gt;&amp;&#39;</p>` {
		t.Errorf("escaped: %q %v", b.String(), err)
	}
	for _, n := range []Node{
		el("script", text("alert(1)")),
		el("p").attr("style", "color:red"),
		el("p").attr("onclick", "x()"),
		link("//evil.example/identity/oo"),
		link("javascript:alert(1)"),
		link("https://evil.example/"),
		el("p", el("iframe")),
	} {
		var b strings.Builder
		if err := WriteHTML(&b, []Node{n}); err == nil {
			t.Errorf("%+v written: %q", n, b.String())
		}
	}
}
