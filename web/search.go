package web

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/ttld-dev/ttld/protocol"
)

// search sends a typed id to its page: a height, an identity or contract id (64 hex
// digits: the identity when one exists), or an address (40).
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	target := ""
	switch {
	case len(q) == 2*protocol.AddressLen && isHex(q):
		target = "/address/" + strings.ToLower(q)
	case len(q) == 2*protocol.IdentityIDLen && isHex(q):
		target = "/contract/" + strings.ToLower(q)
		if id, err := protocol.ParseIdentityID(strings.ToLower(q)); err == nil {
			if st, err := s.c.Identity(r.Context(), id, 0, false); err == nil && st.Present {
				target = "/identity/" + id.String()
			}
		}
	default:
		if h, err := strconv.ParseInt(q, 10, 64); err == nil && h > 0 {
			target = "/block/" + strconv.FormatInt(h, 10)
		}
	}
	if target == "" {
		s.page("error.html", func(*http.Request) (any, error) {
			return nil, errBadInput{"search", q, "a block height, a 64-hex identity or contract id, or a 40-hex address"}
		})(w, r)
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
