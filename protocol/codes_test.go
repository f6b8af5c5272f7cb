package protocol

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestCodesPinned pins every consensus code and whether its refusal is paid. The table
// is docs/ERRORS.md; a change here is a consensus change and needs a new protocol
// version, never a renumbering.
func TestCodesPinned(t *testing.T) {
	pinned := []struct {
		code Code
		want uint32
		paid bool
	}{
		{CodeOK, 0, false},
		{CodeTxDecode, 10001, false},
		{CodeTxTooLarge, 10002, false},
		{CodeUnsupportedTxFormat, 10003, false},
		{CodeUnknownTransitionType, 10004, false},
		{CodeInvalidTransition, 10005, false},
		{CodeIdentityNotFound, 20000, false},
		{CodeMissingPublicKey, 20001, false},
		{CodeInvalidSignature, 20002, false},
		{CodeAddressNotFound, 20010, false},
		{CodeBalanceIsNotEnough, 30000, false},
		{CodeInvalidIdentityNonce, 40204, false},
		{CodeIdentityInsufficientBalance, 40210, true},
		{CodeRecipientIdentityNotFound, 40211, true},
		{CodeInvalidAddressNonce, 40220, false},
		{CodeAddressInsufficientBalance, 40221, true},
	}
	for _, p := range pinned {
		if uint32(p.code) != p.want {
			t.Errorf("code %d renumbered to %d", p.want, p.code)
		}
		if p.code.Paid() != p.paid {
			t.Errorf("code %d: paid = %v, want %v", p.want, p.code.Paid(), p.paid)
		}
	}
	// Every typed error reports the code of its row.
	errs := map[Code]Error{
		CodeTxDecode:                    ErrTxDecode{},
		CodeTxTooLarge:                  ErrTxTooLarge{},
		CodeUnsupportedTxFormat:         ErrUnsupportedTxFormat{},
		CodeUnknownTransitionType:       ErrUnknownTransitionType{},
		CodeInvalidTransition:           ErrInvalidTransition{},
		CodeIdentityNotFound:            ErrIdentityNotFound{},
		CodeMissingPublicKey:            ErrMissingPublicKey{},
		CodeInvalidSignature:            ErrInvalidSignature{},
		CodeAddressNotFound:             ErrAddressNotFound{},
		CodeBalanceIsNotEnough:          ErrBalanceIsNotEnough{},
		CodeInvalidIdentityNonce:        ErrInvalidIdentityNonce{},
		CodeIdentityInsufficientBalance: ErrIdentityInsufficientBalance{},
		CodeRecipientIdentityNotFound:   ErrRecipientIdentityNotFound{},
		CodeInvalidAddressNonce:         ErrInvalidAddressNonce{},
		CodeAddressInsufficientBalance:  ErrAddressInsufficientBalance{},
	}
	if len(errs) != len(pinned)-1 {
		t.Fatalf("%d typed errors for %d codes", len(errs), len(pinned)-1)
	}
	for c, e := range errs {
		if e.Code() != c {
			t.Errorf("%T reports %d, want %d", e, e.Code(), c)
		}
		if got, ok := CodeOf(e); !ok || got != c {
			t.Errorf("CodeOf(%T) = %d, %v", e, got, ok)
		}
	}
}

// TestErrorsDoc checks docs/ERRORS.md row by row against the code table.
func TestErrorsDoc(t *testing.T) {
	raw, err := os.ReadFile("../docs/ERRORS.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[Code]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(cells[1]), 10, 32)
		if err != nil || n < 10000 {
			continue
		}
		rows[Code(n)] = strings.TrimSpace(cells[3])
	}
	codes := []Code{CodeTxDecode, CodeTxTooLarge, CodeUnsupportedTxFormat, CodeUnknownTransitionType,
		CodeInvalidTransition, CodeIdentityNotFound, CodeMissingPublicKey, CodeInvalidSignature,
		CodeAddressNotFound, CodeBalanceIsNotEnough, CodeInvalidIdentityNonce,
		CodeIdentityInsufficientBalance, CodeRecipientIdentityNotFound, CodeInvalidAddressNonce,
		CodeAddressInsufficientBalance}
	if len(rows) != len(codes) {
		t.Errorf("docs/ERRORS.md lists %d codes, the code has %d", len(rows), len(codes))
	}
	for _, c := range codes {
		want := "unpaid"
		if c.Paid() {
			want = "paid"
		}
		if got, ok := rows[c]; !ok || got != want {
			t.Errorf("docs/ERRORS.md row %d: %q, want %q", c, got, want)
		}
	}
}
