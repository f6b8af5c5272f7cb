package drive

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// stateDocBlocks reads the example blocks of docs/STATE.md: the lines of the fenced
// block after each "<!-- example NAME -->", split into fields.
func stateDocBlocks(t *testing.T) map[string][][]string {
	t.Helper()
	f, err := os.Open("../docs/STATE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blocks := map[string][][]string{}
	name, fences := "", 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<16)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "<!-- example "); ok {
			name, fences = strings.TrimSuffix(n, " -->"), 0
			blocks[name] = [][]string{}
			continue
		}
		if name == "" {
			continue
		}
		if strings.HasPrefix(line, "```") {
			if fences++; fences == 2 {
				name = ""
			}
			continue
		}
		if fs := strings.Fields(line); fences == 1 && len(fs) > 0 {
			blocks[name] = append(blocks[name], fs)
		}
	}
	return blocks
}

// hexFields joins the leading fields of an annotated line that are hex of whole bytes;
// the annotation is what follows.
func hexFields(fields []string) string {
	var out string
	for _, f := range fields {
		if _, err := hex.DecodeString(f); err != nil {
			break
		}
		out += f
	}
	return out
}

// TestStateDocExample checks the worked example of docs/STATE.md ("Documents") against
// the code: a listing of docs/examples/market.json is created through InsertDocument,
// the one write path, and every item it writes must be the example's, byte for byte.
// The annotated breakdowns of the document's key, its value and one index entry's key
// (each line: hex fields, then words) must concatenate to those bytes.
func TestStateDocExample(t *testing.T) {
	types := marketTypes(t)
	var listing protocol.DocumentType
	for _, dt := range types {
		if dt.Name == "listing" {
			listing = dt
		}
	}
	ctx, err := protocol.ContextFor(protocol.Latest, 1_700_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	owner := protocol.IdentityID(bytes.Repeat([]byte{0x11}, protocol.IdentityIDLen))
	contract := protocol.NewContractID(owner, 1)
	entropy := [32]byte(bytes.Repeat([]byte{0x22}, 32))
	values, err := protocol.ParseDocumentData(listing, []byte(`{"sku":"LAMP-1","category":"home","quantity":3,"seller":[`+
		strings.TrimSuffix(strings.Repeat("17,", 32), ",")+`],"active":true}`), ctx.Limits)
	if err != nil {
		t.Fatal(err)
	}
	d := protocol.Document{
		ID: protocol.NewDocumentID(contract, owner, "listing", entropy), Owner: owner, Revision: 1,
		CreatedAt: ctx.BlockTimeMs, UpdatedAt: ctx.BlockTimeMs, Values: values,
	}
	s, _ := newTestStore(t, 0)
	kv := NewCache(s.Working())
	st := &Storage{Payer: owner, Epoch: 0, PerByte: 27000}
	dt := DocumentType{Contract: contract, DocumentType: listing}
	if err := InsertDocument(kv, st, dt, d); err != nil {
		t.Fatal(err)
	}
	var items [][]string
	prefix := ContractPrefix(contract)
	err = kv.Iterate(prefix, PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		items = append(items, []string{hex.EncodeToString(k), hex.EncodeToString(v)})
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}

	blocks := stateDocBlocks(t)
	ids := map[string]string{"owner": owner.String(), "contract": contract.String(), "entropy": hex.EncodeToString(entropy[:]), "id": d.ID.String()}
	got := map[string]string{}
	for _, l := range blocks["listing-ids"] {
		got[l[0]] = l[1]
	}
	for k, w := range ids {
		if got[k] != w {
			t.Errorf("docs/STATE.md listing-ids: %s = %q, the code gives %s", k, got[k], w)
		}
	}

	want := func() string {
		var b strings.Builder
		for _, it := range items {
			b.WriteString(it[0] + "\n  " + it[1] + "\n")
		}
		return b.String()
	}
	doc := blocks["listing-items"]
	if len(doc) != 2*len(items) {
		t.Fatalf("docs/STATE.md listing-items has %d lines, the insert writes %d items: key, then value, each on its line:\n%s", len(doc), len(items), want())
	}
	for i, it := range items {
		if doc[2*i][0] != it[0] || doc[2*i+1][0] != it[1] {
			t.Fatalf("docs/STATE.md listing-items item %d differs from the code's:\n%s", i, want())
		}
	}

	key := DocumentKey(contract, "listing", d.ID)
	value, err := kv.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	var byCategory []byte
	for _, ix := range listing.Indices {
		if ix.Name == "byCategory" {
			enc, _ := IndexValues(IndexFields(listing, ix), d)
			byCategory = IndexEntryKey(contract, "listing", ix.Name, enc, d.ID)
		}
	}
	for name, w := range map[string][]byte{"listing-document-key": key, "listing-document-value": value, "listing-index-key": byCategory} {
		var cat string
		for _, l := range blocks[name] {
			cat += hexFields(l)
		}
		if cat != hex.EncodeToString(w) {
			t.Errorf("docs/STATE.md %s concatenates to\n%s\nthe code gives\n%s", name, cat, hex.EncodeToString(w))
		}
	}
}

// TestStateDocGenesisRecord checks the row of `104 | 'g'` in docs/STATE.md's key table
// against EncodeChainParams: its value column, read field by field ("name `type`
// (constant)", joined by " ++ "), must write exactly the bytes the encoder writes for
// the same parameters.
func TestStateDocGenesisRecord(t *testing.T) {
	raw, err := os.ReadFile("../docs/STATE.md")
	if err != nil {
		t.Fatal(err)
	}
	var value string
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "| `104 \\| 'g'` | "); ok {
			value, _, _ = strings.Cut(rest, " | ")
		}
	}
	value, ok := strings.CutPrefix(value, "chain parameters: ")
	if !ok {
		t.Fatalf("docs/STATE.md has no row `104 | 'g'` whose value starts with \"chain parameters: \"")
	}
	p := ChainParams{ChainID: "ttld-doc", GenesisTimeMs: 1_767_225_600_000, InitialHeight: 7, EpochLengthS: 3_600}
	ints := map[string]uint64{
		"chain id length": uint64(len(p.ChainID)),
		"genesis time ms": p.GenesisTimeMs,
		"initial height":  p.InitialHeight,
		"epoch length s":  p.EpochLengthS,
	}
	field := regexp.MustCompile("^([a-z ]+?)(?: `(u8|u64)`)?(?: \\(([0-9]+)\\))?$")
	var got []byte
	for _, f := range strings.Split(value, " ++ ") {
		m := field.FindStringSubmatch(f)
		if m == nil {
			t.Fatalf("docs/STATE.md `104 | 'g'`: field %q is not \"name `type` (constant)\"", f)
		}
		name, typ, constant := m[1], m[2], m[3]
		n, known := ints[name]
		if constant != "" {
			c, err := strconv.ParseUint(constant, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			n, known = c, true
		}
		switch {
		case typ == "" && name == "chain id":
			got = append(got, p.ChainID...)
		case typ == "u8" && known:
			got = append(got, uint8(n))
		case typ == "u64" && known:
			got = binary.BigEndian.AppendUint64(got, n)
		default:
			t.Fatalf("docs/STATE.md `104 | 'g'`: field %q names no parameter the test knows", f)
		}
	}
	if want := EncodeChainParams(p); !bytes.Equal(got, want) {
		t.Fatalf("docs/STATE.md `104 | 'g'` (%s) writes\n%X\nEncodeChainParams writes\n%X", value, got, want)
	}
}
