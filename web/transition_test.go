package web

import (
	"net/url"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestEveryKindIsDescribed: the transaction page describes every registered kind of
// transition.
func TestEveryKindIsDescribed(t *testing.T) {
	for _, k := range protocol.Kinds() {
		if fields, err := describe(k.New()); err != nil || len(fields) == 0 {
			t.Errorf("%s: %v", k.Name, err)
		}
	}
}

// TestPager: a list's pages link the pages around them, their query kept.
func TestPager(t *testing.T) {
	q := url.Values{"owner": {"ab"}}
	for _, c := range []struct {
		page, total, pages int
		prev, next         string
	}{
		{1, 0, 1, "", ""},
		{1, ListPerPage, 1, "", ""},
		{1, ListPerPage + 1, 2, "", "/contracts?owner=ab&page=2"},
		{2, 3 * ListPerPage, 3, "/contracts?owner=ab&page=1", "/contracts?owner=ab&page=3"},
		{3, 3 * ListPerPage, 3, "/contracts?owner=ab&page=2", ""},
	} {
		p := pagerOf("/contracts", q, c.page, c.total)
		if p.Pages != c.pages || p.PrevHref != c.prev || p.NextHref != c.next || p.Total != c.total {
			t.Errorf("page %d of %d rows: %+v, want %d pages, %q and %q", c.page, c.total, p, c.pages, c.prev, c.next)
		}
	}
}
