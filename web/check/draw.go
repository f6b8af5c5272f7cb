package check

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// A proof box's drawing: its labels, units, links and bars around its figures, as a
// tree of nodes drawn from the figures alone (and the links the answers name). The
// server writes a box's HTML from it (WriteHTML), and the browser's check draws the
// same tree again from the proven answers, compares it with what the page shows
// (CompareDrawing) and displays its own (docs/PROOFS.md, "What VERIFIED means").

// Node is an element of a drawing, or a text: an element has a Tag from the drawing's
// allow-list (drawnTags), attributes from its allow-list (drawnAttrs) and children;
// a text (Tag "") has Text alone.
type Node struct {
	Tag   string            `json:"tag,omitempty"`
	Text  string            `json:"text,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
	Kids  []Node            `json:"kids,omitempty"`
	// Hidden and Generated are set only in a drawing read from a page: the element is
	// not displayed (not rendered, invisible, transparent or of no size), or its style
	// generates text (CSS content) that its nodes do not hold.
	Hidden    bool   `json:"hidden,omitempty"`
	Generated string `json:"generated,omitempty"`
}

// drawnTags are the elements a drawing holds: HTML's, then SVG's (web/static/verify.js
// holds the same list, and draws the last four in SVG's namespace).
var drawnTags = map[string]bool{
	"h1": true, "h2": true, "p": true, "dl": true, "dt": true, "dd": true, "div": true, "span": true,
	"table": true, "tbody": true, "tr": true, "th": true, "td": true, "a": true, "code": true, "pre": true,
	"bdi": true, "br": true,
	"svg": true, "rect": true, "line": true, "text": true,
}

// drawnAttrs are the attributes an element of a drawing may carry (web/static/verify.js
// holds the same list). An href is the view's own path (one /, never //), which
// drawnHref checks.
var drawnAttrs = map[string]bool{
	"id": true, "class": true, "href": true, "colspan": true, "data-figure": true, "data-bar": true,
	"width": true, "height": true, "viewBox": true, "role": true, "aria-label": true, "x": true, "y": true,
	"x1": true, "x2": true, "y1": true, "y2": true, "fill": true, "stroke": true, "stroke-width": true,
	"font-size": true, "text-anchor": true,
}

// el is an element of tag with children kids, its texts tidied as a browser's parser
// leaves them: no empty text, no two texts side by side.
func el(tag string, kids ...Node) Node { return Node{Tag: tag, Kids: tidy(kids)} }

func tidy(kids []Node) []Node {
	var out []Node
	for _, k := range kids {
		switch {
		case k.Tag == "" && k.Text == "":
		case k.Tag == "" && len(out) > 0 && out[len(out)-1].Tag == "":
			out[len(out)-1].Text += k.Text
		default:
			out = append(out, k)
		}
	}
	return out
}

func text(s string) Node { return Node{Text: s} }

// attr returns n with attribute name set to value.
func (n Node) attr(name, value string) Node {
	a := make(map[string]string, len(n.Attrs)+1)
	for k, v := range n.Attrs {
		a[k] = v
	}
	a[name] = value
	n.Attrs = a
	return n
}

func (n Node) id(id string) Node          { return n.attr("id", id) }
func (n Node) class(c string) Node        { return n.attr("class", c) }
func link(href string, kids ...Node) Node { return el("a", kids...).attr("href", href) }

// drawing writes the nodes of one box: its figures' texts are f's, its links those
// the answers name.
type drawing struct {
	f     Figures
	links map[string]string
}

// fig is figure name (its parts joined by dots) as the page shows it: an isolate
// (bdi) that carries its name. The renderers ask only for the figures their answers
// give (has, items); one f does not have would be drawn empty, a figure the proof
// does not have, which Verify refuses on every page that shows it.
func (d drawing) fig(parts ...any) Node {
	name := Name(parts...)
	return el("bdi", text(d.f[name])).class("figure").attr("data-figure", name)
}

func (d drawing) has(parts ...any) bool { _, ok := d.f[Name(parts...)]; return ok }

// items are the indexes, ascending, of the list prefix (parts joined by dots) that f
// holds: every i of a figure named prefix.i or prefix.i.*.
func (d drawing) items(parts ...any) []int {
	prefix := Name(parts...) + "."
	seen := map[int]bool{}
	for name := range d.f {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if i, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0]); err == nil && i >= 0 {
			seen[i] = true
		}
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// row is a dt and its dd.
func row(label string, dd Node) []Node { return []Node{el("dt", text(label)), dd} }

func dl(rows ...[]Node) Node {
	n := el("dl")
	for _, r := range rows {
		n.Kids = append(n.Kids, r...)
	}
	return n
}

// table is a table of a header row and rows (each a tr), with its tbody written out
// as a browser's parser adds it.
func table(id string, head []string, numeric map[int]bool, rows []Node) Node {
	tr := el("tr")
	for i, h := range head {
		th := el("th", text(h))
		if numeric[i] {
			th = th.class("num")
		}
		tr.Kids = append(tr.Kids, th)
	}
	t := el("table", el("tbody", append([]Node{tr}, rows...)...))
	if id != "" {
		t = t.id(id)
	}
	return t
}

func num(kids ...Node) Node { return el("td", kids...).class("num") }

func hexCell(kids ...Node) Node { return el("td", kids...).class("hex") }

// draw returns the drawing of the box of kind k with figures f and links.
func draw(k boxKind, f Figures, links map[string]string) []Node {
	return tidyAll(drawKind(k, drawing{f: f, links: links}))
}

// tidyAll tidies the children of every element of nodes, those appended after el
// made them included.
func tidyAll(nodes []Node) []Node {
	nodes = tidy(nodes)
	for i := range nodes {
		nodes[i].Kids = tidyAll(nodes[i].Kids)
	}
	return nodes
}

func drawKind(k boxKind, d drawing) []Node {
	switch k {
	case boxOverview:
		return d.overview()
	case boxIdentity:
		return d.identity()
	case boxAddress:
		return d.address()
	case boxContract:
		return d.contract()
	case boxDocument:
		return d.document()
	case boxDocuments:
		return d.documents()
	case boxValidator:
		return d.validator()
	case boxValidators:
		return d.validators()
	case boxEpochs:
		return d.epochs()
	}
	return nil
}

func (d drawing) overview() []Node {
	dd := func(id string, kids ...Node) Node { return el("dd", kids...).id(id) }
	return []Node{
		el("h1", text("Chain "), d.fig(FigureChain)),
		dl(
			row("Protocol version", dd("protocol-version", d.fig("protocol-version"))),
			row("Next version", dd("next-version", d.fig("next-version"))),
			row("Version signals", dd("upgrade-signals", d.fig("upgrade-signals"),
				text(" (proposers signal the newest version their binaries implement; docs/STATE.md, Protocol upgrades)"))),
			row("Current epoch", dd("epoch", link("/epochs", d.fig("epoch")))),
			row("Storage pool", dd("storage-pool", d.fig("storage-pool"), text(" credits, to be distributed at the next epoch change"))),
			row("Lifetime pools", dd("lifetime-pools", d.fig("lifetime-pools"),
				text(" credits, paid for the lifetime of documents with a ttl and spread over the epochs it spans"))),
			row("Pending refunds", dd("pending-refunds", d.fig("pending-refunds"),
				text(" credits refunded to the owners of removed storage, taken back from the epochs' pools at the next epoch change"))),
			row("Cleanup backlog", dd("backlog", d.fig("backlog"), text(" documents expired and waiting for the cleanup"))),
			row("Credits", dd("credits", d.fig("total-credits"), text(" in state, "), d.fig("supply"),
				text(" supplied at genesis ("), d.fig("conserved"), text(")"))),
			row("App state read at height", el("dd", d.fig(FigureHeight), text(" (block time "), d.fig("block-time"), text(")"))),
		),
	}
}

// account is the rows of an identity's or an address's balance and nonce, or its
// state when it holds nothing.
func (d drawing) account() [][]Node {
	if !d.has("balance") {
		return [][]Node{row("State", el("dd", d.fig("state")).id("absent"))}
	}
	return [][]Node{
		row("Balance", el("dd", d.fig("balance"), text(" credits")).id("balance")),
		row("Last nonce", el("dd", d.fig("nonce"))),
	}
}

func (d drawing) identity() []Node {
	rows := [][]Node{row("Id", el("dd", d.fig("id")).class("hex"))}
	rows = append(rows, d.account()...)
	if d.has("balance") {
		keys := el("dd")
		for _, i := range d.items("key") {
			keys.Kids = append(keys.Kids, el("code", d.fig("key", i)), el("br"))
		}
		rows = append(rows, row("Keys", keys))
	}
	rows = append(rows, row("Read at height", el("dd", d.fig(FigureHeight))))
	return []Node{el("h1", text("Identity")), dl(rows...)}
}

func (d drawing) address() []Node {
	rows := [][]Node{row("Address", el("dd", d.fig("address")).class("hex"))}
	rows = append(rows, d.account()...)
	rows = append(rows, row("Read at height", el("dd", d.fig(FigureHeight))))
	out := []Node{el("h1", text("Address")), dl(rows...)}
	if !d.has("since") {
		return out
	}
	var changes []Node
	for _, i := range d.items("change") {
		heights := d.fig("change", i, "heights")
		if href, ok := d.links[Name("change", i, "heights")]; ok {
			heights = link(href, heights)
		}
		changes = append(changes, el("tr", num(heights), num(d.fig("change", i, "balance"))))
	}
	if len(changes) == 0 {
		changes = []Node{el("tr", el("td", text("none recorded")).attr("colspan", "2"))}
	}
	out = append(out, el("h2", text("Balance changes since height "), d.fig("since")),
		table("changes", []string{"Heights", "Balance after"}, map[int]bool{0: true, 1: true}, changes))
	if d.has("changes-cut") {
		out = append(out, el("p", d.fig("changes-cut")).class("note"))
	}
	return out
}

func (d drawing) contract() []Node {
	rows := [][]Node{row("Id", el("dd", d.fig("id")).class("hex"))}
	if !d.has("owner") {
		rows = append(rows, row("State", el("dd", d.fig("state")).id("absent")), row("Read at height", el("dd", d.fig(FigureHeight))))
		return []Node{el("h1", text("Contract")), dl(rows...)}
	}
	rows = append(rows,
		row("Owner", el("dd", link("/identity/"+d.f["owner"], d.fig("owner"))).class("hex")),
		row("Version", el("dd", d.fig("version"))))
	if mods := d.items("moderator"); len(mods) > 0 {
		dd := el("dd")
		for _, i := range mods {
			dd.Kids = append(dd.Kids, link("/identity/"+d.f[Name("moderator", i)], d.fig("moderator", i)).class("hex"), el("br"))
		}
		rows = append(rows, row("Moderators", dd))
	}
	rows = append(rows, row("Read at height", el("dd", d.fig(FigureHeight), text(", protocol version "), d.fig("protocol-version"))))
	out := []Node{el("h1", text("Contract")), dl(rows...)}
	for _, i := range d.items("type") {
		name := d.f[Name("type", i, "name")]
		out = append(out,
			el("h2", text("Type "), d.fig("type", i, "name"), text(" "), link(d.links[Name("type", i, "name")], text("documents"))).id("type-"+name),
			dl(row("Time to live", el("dd", d.fig("type", i, "ttl")).class("ttl")), row("Flags", el("dd", d.fig("type", i, "flags")))))
		var props []Node
		for _, j := range d.items("type", i, "property") {
			p := func(field string) Node { return d.fig("type", i, "property", j, field) }
			props = append(props, el("tr", num(p("position")), el("td", p("name")), el("td", p("type")), el("td", p("required")), el("td", p("refers"))))
		}
		out = append(out, table("", []string{"Position", "Property", "Type", "", "Refers to"}, map[int]bool{0: true}, props))
		if indexes := d.items("type", i, "index"); len(indexes) > 0 {
			var rows []Node
			for _, j := range indexes {
				x := func(field string) Node { return el("td", d.fig("type", i, "index", j, field)) }
				rows = append(rows, el("tr", x("name"), x("properties"), x("flags"), x("time-range")))
			}
			out = append(out, table("", []string{"Index", "Properties", "Flags", "Time range"}, nil, rows))
		}
	}
	return append(out, el("h2", text("Definition (canonical JSON)")), el("pre", el("code", d.fig("definition"))))
}

func (d drawing) document() []Node {
	rows := [][]Node{
		row("Id", el("dd", d.fig("id")).class("hex")),
		row("Contract", el("dd", link("/contract/"+d.f["contract"], d.fig("contract"))).class("hex")),
	}
	if d.has("owner") {
		rows = append(rows,
			row("Owner ($ownerId)", el("dd", link("/identity/"+d.f["owner"], d.fig("owner"))).class("hex")),
			row("Revision", el("dd", d.fig("revision"))),
			row("$createdAt", el("dd", d.fig("created")).id("created-at")),
			row("$updatedAt", el("dd", d.fig("updated"))))
		if d.has("renewed") {
			rows = append(rows, row("$renewedAt", el("dd", d.fig("renewed")).id("renewed-at")))
		}
		if d.has("price") {
			rows = append(rows, row("Price", el("dd", d.fig("price"), text(" credits"))))
		}
		if d.has("expiry") {
			expiry := el("dd", d.fig("expiry")).id("expiry")
			if Expired(d.f["expiry"]) {
				expiry = expiry.class("expired")
			}
			lifetime := el("dd", d.fig("lifetime")).id("lifetime")
			if d.has("renewal") {
				lifetime.Kids = append(lifetime.Kids, text(", renewed at "), d.fig("renewal"), text(" of it"))
			}
			rows = append(rows, row("Expires at", expiry), row("Lifetime used", lifetime))
		}
	} else {
		rows = append(rows, row("State", el("dd", d.fig("state")).id("absent")))
	}
	rows = append(rows, row("Read at height", el("dd", d.fig(FigureHeight), text(" (block time "), d.fig("block-time"),
		text("), protocol version "), d.fig("protocol-version"))))
	out := []Node{el("h1", text("Document of type "), d.fig("type")), dl(rows...)}
	if d.has("lifetime") {
		out = append(out, el("div", d.lifetimeBar()).class("lifetime"))
	}
	if fields := d.items("field"); len(fields) > 0 {
		var rows []Node
		for _, j := range fields {
			rows = append(rows, el("tr", el("td", d.fig("field", j, "name")), el("td", d.fig("field", j, "value"))))
		}
		out = append(out, el("h2", text("Fields")), table("fields", []string{"Property", "Value"}, nil, rows))
	}
	return out
}

// Expired reports whether a document's expiry figure says it is past its expiry.
func Expired(expiry string) bool { return strings.HasPrefix(expiry, "expired") }

// BarX is a percent figure ("37%") in thousandths of a bar's width; -1 when it is not
// a percent.
func BarX(percent string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(percent, "%"))
	if err != nil || !strings.HasSuffix(percent, "%") || n < 0 || n > 100 {
		return -1
	}
	return n * 10
}

// lifetimeBar draws a document's lifetime, from its creation to its expiry: the part
// used (the lifetime figure), and where its last renewal fell (the renewal figure).
func (d drawing) lifetimeBar() Node {
	fill := "#1f5fa8"
	if Expired(d.f["expiry"]) {
		fill = "#c04e1a"
	}
	svg := el("svg",
		el("rect").attr("x", "0").attr("y", "16").attr("width", "1000").attr("height", "18").attr("fill", "#e3e6eb"),
		el("rect").attr("data-bar", "lifetime").attr("x", "0").attr("y", "16").attr("width", strconv.Itoa(max(0, BarX(d.f["lifetime"])))).
			attr("height", "18").attr("fill", fill),
	).attr("width", "100%").attr("height", "52").attr("viewBox", "0 0 1000 52").attr("role", "img").attr("aria-label", "lifetime used")
	if x := BarX(d.f["renewal"]); x >= 0 {
		at, anchor := strconv.Itoa(x), "middle"
		if x < 100 {
			anchor = "start"
		} else if x > 900 {
			anchor = "end"
		}
		svg.Kids = append(svg.Kids,
			el("line").attr("data-bar", "renewal").attr("x1", at).attr("y1", "12").attr("x2", at).attr("y2", "38").attr("stroke", "#2a8a3e").attr("stroke-width", "4"),
			el("text", text("renewed")).attr("data-bar", "renewal").attr("x", at).attr("y", "11").attr("font-size", "12").attr("text-anchor", anchor))
	}
	svg.Kids = append(svg.Kids,
		el("text", text("created")).attr("x", "0").attr("y", "50").attr("font-size", "13"),
		el("text", text("expiry")).attr("x", "1000").attr("y", "50").attr("font-size", "13").attr("text-anchor", "end"))
	return svg
}

func (d drawing) documents() []Node {
	out := []Node{
		el("h1", text("Documents of type "), d.fig("type")),
		el("p", text("Contract "), link("/contract/"+d.f["contract"], d.fig("contract")).class("hex"), text(", read at height "), d.fig(FigureHeight),
			text(" (block time "), d.fig("block-time"), text(").")),
		el("p", text("Query: "), el("code", d.fig("query"))),
	}
	if d.has("count") {
		out = append(out, el("p", text("Documents matching its where clauses, by the count their index keeps: "), d.fig("count"), text(".")).id("count"))
	}
	var rows []Node
	for _, i := range d.items("doc") {
		values := el("td")
		for _, j := range d.items("doc", i, "field") {
			values.Kids = append(values.Kids, el("span", d.fig("doc", i, "field", j, "name"), text(": "), d.fig("doc", i, "field", j, "value")).class("field"))
		}
		expiry := el("td")
		if d.has("doc", i, "expiry") {
			expiry.Kids = []Node{d.fig("doc", i, "expiry")}
		}
		rows = append(rows, el("tr",
			hexCell(link(d.links[Name("doc", i, "id")], d.fig("doc", i, "id"))),
			hexCell(link(d.links[Name("doc", i, "owner")], d.fig("doc", i, "owner"))),
			num(d.fig("doc", i, "revision")), el("td", d.fig("doc", i, "created")), expiry, values))
	}
	if len(rows) == 0 {
		rows = []Node{el("tr", el("td", text("no document matches")).attr("colspan", "6"))}
	}
	return append(out, table("documents", []string{"Document", "Owner", "Revision", "Created", "Expiry", "Values"}, map[int]bool{2: true}, rows))
}

func (d drawing) validator() []Node {
	rows := [][]Node{row("Consensus address", el("dd", d.fig("validator")).class("hex"))}
	if d.has("payout-identity") {
		rows = append(rows, row("Payout identity", el("dd", link("/identity/"+d.f["payout-identity"], d.fig("payout-identity")).class("hex"),
			text(" (its share of each epoch's pool is paid to it)")).id("payout")))
	} else {
		rows = append(rows, row("State", el("dd", d.fig("state")).id("absent")))
	}
	rows = append(rows, row("Read at height", el("dd", d.fig(FigureHeight))))
	return []Node{el("h1", text("Validator")), dl(rows...)}
}

func (d drawing) validators() []Node {
	var set, proposals, evidence []Node
	for _, i := range d.items("validator") {
		v := func(field string) Node { return d.fig("validator", i, field) }
		set = append(set, el("tr",
			el("td", link("/validator/"+d.f[Name("validator", i, "address")], v("address")).class("hex")),
			num(v("power")),
			el("td", link("/identity/"+d.f[Name("validator", i, "operator")], v("operator")).class("hex"))))
	}
	for _, i := range d.items("proposal") {
		p := func(field string) Node { return d.fig("proposal", i, field) }
		proposals = append(proposals, el("tr", num(p("id")), el("td", p("change")), hexCell(p("proposer")), el("td", p("approvals")), el("td", p("state"))))
	}
	for _, i := range d.items("evidence") {
		evidence = append(evidence, el("tr", hexCell(d.fig("evidence", i, "validator")), el("td", d.fig("evidence", i, "what"))))
	}
	return []Node{
		el("h1", text("Validators")),
		dl(row("The set in state", el("dd", d.fig("validators")).id("validators")), row("Read at height", el("dd", d.fig(FigureHeight)))),
		table("set", []string{"Validator", "Power", "Operator"}, map[int]bool{1: true}, set),
		el("h2", text("Pending proposals: "), d.fig("proposals")),
		table("proposals", []string{"Number", "Change", "Proposed by", "Approvals", "State"}, map[int]bool{0: true}, proposals),
		el("h2", text("Evidence handled: "), d.fig("evidence")),
		table("evidence", []string{"Validator", "What"}, nil, evidence),
	}
}

func (d drawing) epochs() []Node {
	indexes := d.items("epoch")
	var rows []Node
	for k := len(indexes) - 1; k >= 0; k-- {
		e := indexes[k]
		proposers := el("td")
		for _, j := range d.items("epoch", e, "proposer") {
			proposers.Kids = append(proposers.Kids, el("code", d.fig("epoch", e, "proposer", j, "address")), text(" "),
				d.fig("epoch", e, "proposer", j, "blocks"), el("br"))
		}
		rows = append(rows, el("tr", num(d.fig("epoch", e, "index")), el("td", d.fig("epoch", e, "start")),
			num(d.fig("epoch", e, "fees")), num(d.fig("epoch", e, "storage")), proposers, el("td", d.fig("epoch", e, "payout"))))
	}
	return []Node{
		el("h1", text("Epochs")),
		el("p", text("The current epoch is "), d.fig("epoch"), text("; each lasts "), d.fig("epoch-length"),
			text(". The storage pool holds "), d.fig("storage-pool"), text(" credits. Read at height "), d.fig(FigureHeight), text(".")),
		table("epochs", []string{"Epoch", "Start", "Processing fees", "Storage share", "Proposers (blocks)", "Payout"}, map[int]bool{0: true, 2: true, 3: true}, rows),
	}
}

// documentsHref is the documents page of a contract's type.
func documentsHref(contract, typeName string) string {
	return "/documents/" + contract + "/" + url.PathEscape(typeName)
}

// drawnHref reports whether href is a path of the view a drawing may link: one
// slash, then no second one right after it, no scheme, no backslash.
func drawnHref(href string) bool {
	return strings.HasPrefix(href, "/") && !strings.HasPrefix(href, "//") && !strings.ContainsAny(href, "\\\x00")
}

// WriteHTML writes nodes as HTML: every text and attribute value escaped, every
// element and attribute one a drawing may hold (an error otherwise, as for an href
// that is not the view's own).
func WriteHTML(b *strings.Builder, nodes []Node) error {
	for _, n := range nodes {
		if n.Tag == "" {
			b.WriteString(escapeHTML(n.Text))
			continue
		}
		if !drawnTags[n.Tag] {
			return fmt.Errorf("a drawing holds no %q element", n.Tag)
		}
		b.WriteString("<" + n.Tag)
		names := make([]string, 0, len(n.Attrs))
		for name := range n.Attrs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !drawnAttrs[name] || name == "href" && !drawnHref(n.Attrs[name]) {
				return fmt.Errorf("a drawing's %s holds no attribute %s=%q", n.Tag, name, n.Attrs[name])
			}
			b.WriteString(" " + name + `="` + escapeHTML(n.Attrs[name]) + `"`)
		}
		b.WriteString(">")
		if n.Tag == "br" {
			continue
		}
		if err := WriteHTML(b, n.Kids); err != nil {
			return err
		}
		b.WriteString("</" + n.Tag + ">")
	}
	return nil
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")

func escapeHTML(s string) string { return htmlEscaper.Replace(s) }
