package web

import (
	"net/http"

	"github.com/ttld-dev/ttld/protocol"
)

// contractAndType reads the {contract} and {type} path values.
func contractAndType(r *http.Request) (protocol.ContractID, string, error) {
	c, err := protocol.ParseContractID(r.PathValue("contract"))
	if err != nil {
		return c, "", errBadInput{"contract", r.PathValue("contract"), "64 hex digits"}
	}
	t := r.PathValue("type")
	if why := protocol.ValidName(t); why != "" {
		return c, "", errBadInput{"document type", t, "a type name: " + why}
	}
	return c, t, nil
}

// documentOf reads a document page's path: {contract}, {type} and {id}.
func documentOf(r *http.Request) (protocol.ContractID, string, protocol.DocumentID, error) {
	c, t, err := contractAndType(r)
	if err != nil {
		return c, t, protocol.DocumentID{}, err
	}
	id, err := protocol.ParseDocumentID(r.PathValue("id"))
	if err != nil {
		return c, t, id, errBadInput{"document", r.PathValue("id"), "64 hex digits"}
	}
	return c, t, id, nil
}
