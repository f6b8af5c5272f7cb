package protocol

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the code table in docs/ERRORS.md from the registry")

// TestCodesPinned pins every consensus code, its name and whether its refusal is paid.
// A change here is a consensus change and needs a new protocol version, never a
// renumbering.
func TestCodesPinned(t *testing.T) {
	pinned := []struct {
		code Code
		want uint32
		name string
		paid bool
		err  Error // the typed error that carries the code; nil for OK
	}{
		{CodeOK, 0, "OK", false, nil},
		{CodeTxDecode, 10001, "TxDecode", false, ErrTxDecode{}},
		{CodeTxTooLarge, 10002, "TxTooLarge", false, ErrTxTooLarge{}},
		{CodeUnsupportedTxFormat, 10003, "UnsupportedTxFormat", false, ErrUnsupportedTxFormat{}},
		{CodeUnknownTransitionType, 10004, "UnknownTransitionType", false, ErrUnknownTransitionType{}},
		{CodeInvalidTransition, 10005, "InvalidTransition", false, ErrInvalidTransition{}},
		{CodeInvalidVersionSignal, 10006, "InvalidVersionSignal", false, ErrInvalidVersionSignal{}},
		{CodeJSONSchema, 10101, "JsonSchemaError", false, ErrJSONSchema{}},
		{CodeDuplicateIndex, 10201, "DuplicateIndex", false, ErrDuplicateIndex{}},
		{CodeInvalidContractStructure, 10231, "InvalidContractStructure", false, ErrInvalidContractStructure{}},
		{CodeUndefinedIndexProperty, 10240, "UndefinedIndexProperty", false, ErrUndefinedIndexProperty{}},
		{CodeInvalidSummableProperty, 10241, "InvalidSummableProperty", false, ErrInvalidSummableProperty{}},
		{CodeTooManyDocumentTypes, 10242, "TooManyDocumentTypes", false, ErrTooManyDocumentTypes{}},
		{CodeTooManyProperties, 10243, "TooManyProperties", false, ErrTooManyProperties{}},
		{CodeTooManyIndexes, 10244, "TooManyIndexes", false, ErrTooManyIndexes{}},
		{CodeTooManyIndexProperties, 10245, "TooManyIndexProperties", false, ErrTooManyIndexProperties{}},
		{CodeContractTooLarge, 10246, "ContractTooLarge", false, ErrContractTooLarge{}},
		{CodeInvalidName, 10247, "InvalidName", false, ErrInvalidName{}},
		{CodeInvalidPropertyPosition, 10248, "InvalidPropertyPosition", false, ErrInvalidPropertyPosition{}},
		{CodeDuplicateIndexName, 10249, "DuplicateIndexName", false, ErrDuplicateIndexName{}},
		{CodeContractDecode, 10250, "ContractDecode", false, ErrContractDecode{}},
		{CodeContestedIndexUnsupported, 10251, "ContestedIndexUnsupported", false, ErrContestedIndexUnsupported{}},
		{CodeDocumentDecode, 10260, "DocumentDecode", false, ErrDocumentDecode{}},
		{CodeIdentityNotFound, 20000, "IdentityNotFound", false, ErrIdentityNotFound{}},
		{CodeMissingPublicKey, 20001, "MissingPublicKey", false, ErrMissingPublicKey{}},
		{CodeInvalidSignature, 20002, "InvalidSignature", false, ErrInvalidSignature{}},
		{CodeAddressNotFound, 20010, "AddressNotFound", false, ErrAddressNotFound{}},
		{CodeBalanceIsNotEnough, 30000, "BalanceIsNotEnough", false, ErrBalanceIsNotEnough{}},
		{CodeMaxFeeNotCovered, 30001, "MaxFeeNotCovered", false, ErrMaxFeeNotCovered{}},
		{CodeDataContractAlreadyPresent, 40000, "DataContractAlreadyPresentError", true, ErrDataContractAlreadyPresent{}},
		{CodeInvalidIdentityNonce, 40204, "InvalidIdentityNonce", false, ErrInvalidIdentityNonce{}},
		{CodeIdentityInsufficientBalance, 40210, "IdentityInsufficientBalance", true, ErrIdentityInsufficientBalance{}},
		{CodeRecipientIdentityNotFound, 40211, "RecipientIdentityNotFound", true, ErrRecipientIdentityNotFound{}},
		{CodeDocumentTypeUpdate, 40212, "DocumentTypeUpdateError", true, ErrDocumentTypeUpdate{}},
		{CodeInvalidAddressNonce, 40220, "InvalidAddressNonce", false, ErrInvalidAddressNonce{}},
		{CodeAddressInsufficientBalance, 40221, "AddressInsufficientBalance", true, ErrAddressInsufficientBalance{}},
		{CodeCreditOverflow, 40230, "CreditOverflow", false, ErrCreditOverflow{}},
		{CodeDataContractNotFound, 40240, "DataContractNotFound", true, ErrDataContractNotFound{}},
		{CodeDataContractOwnerMismatch, 40241, "DataContractOwnerMismatch", true, ErrDataContractOwnerMismatch{}},
		{CodeInvalidDataContractVersion, 40242, "InvalidDataContractVersion", true, ErrInvalidDataContractVersion{}},
		{CodeContractConfigUpdate, 40243, "ContractConfigUpdate", true, ErrContractConfigUpdate{}},
		{CodeModeratorNotFound, 40244, "ModeratorNotFound", true, ErrModeratorNotFound{}},
		{CodeInvalidReference, 40245, "InvalidReference", true, ErrInvalidReference{}},
		{CodeReferencedDocumentTypeDeletable, 40122, "ReferencedDocumentTypeDeletableError", true, ErrReferencedDocumentTypeDeletable{}},
		{CodeDocumentAlreadyPresent, 40100, "DocumentAlreadyPresent", true, ErrDocumentAlreadyPresent{}},
		{CodeDocumentNotFound, 40101, "DocumentNotFound", true, ErrDocumentNotFound{}},
		{CodeDocumentOwnerIDMismatch, 40102, "DocumentOwnerIdMismatch", true, ErrDocumentOwnerIDMismatch{}},
		{CodeDuplicateUniqueIndex, 40105, "DuplicateUniqueIndex", true, ErrDuplicateUniqueIndex{}},
		{CodeInvalidDocumentRevision, 40106, "InvalidDocumentRevision", true, ErrInvalidDocumentRevision{}},
		{CodeDocumentNotForSale, 40108, "DocumentNotForSale", true, ErrDocumentNotForSale{}},
		{CodeDocumentIncorrectPurchasePrice, 40109, "DocumentIncorrectPurchasePrice", true, ErrDocumentIncorrectPurchasePrice{}},
		{CodeDocumentExpired, 40140, "DocumentExpiredError", true, ErrDocumentExpired{}},
		{CodeDocumentTypeNotFound, 40250, "DocumentTypeNotFound", true, ErrDocumentTypeNotFound{}},
		{CodeInvalidDocument, 40251, "InvalidDocument", true, ErrInvalidDocument{}},
		{CodeDocumentActionNotAllowed, 40252, "DocumentActionNotAllowed", true, ErrDocumentActionNotAllowed{}},
		{CodeDocumentTypeUnsupported, 40253, "DocumentTypeUnsupported", true, ErrDocumentTypeUnsupported{}},
		{CodeReferencedDocumentNotFound, 40254, "ReferencedDocumentNotFound", true, ErrReferencedDocumentNotFound{}},
		{CodeNotAModerator, 40255, "NotAModerator", true, ErrNotAModerator{}},
		{CodeModerationWindowPassed, 40256, "ModerationWindowPassed", true, ErrModerationWindowPassed{}},
		{CodeRemovalRecordNotFound, 40257, "RemovalRecordNotFound", true, ErrRemovalRecordNotFound{}},
		{CodeRestoreWindowPassed, 40258, "RestoreWindowPassed", true, ErrRestoreWindowPassed{}},
		{CodeRestoredDocumentMismatch, 40259, "RestoredDocumentMismatch", true, ErrRestoredDocumentMismatch{}},
		{CodeNotAValidatorOperator, 40270, "NotAValidatorOperator", true, ErrNotAValidatorOperator{}},
		{CodeValidatorNotFound, 40271, "ValidatorNotFound", true, ErrValidatorNotFound{}},
		{CodeValidatorAlreadyPresent, 40272, "ValidatorAlreadyPresent", true, ErrValidatorAlreadyPresent{}},
		{CodeValidatorPowerMoveTooLarge, 40273, "ValidatorPowerMoveTooLarge", true, ErrValidatorPowerMoveTooLarge{}},
		{CodeValidatorSetWouldBeEmpty, 40274, "ValidatorSetWouldBeEmpty", true, ErrValidatorSetWouldBeEmpty{}},
		{CodeTooManyValidators, 40275, "TooManyValidators", true, ErrTooManyValidators{}},
		{CodeInvalidValidatorOperator, 40276, "InvalidValidatorOperator", true, ErrInvalidValidatorOperator{}},
		{CodeValidatorProposalNotFound, 40277, "ValidatorProposalNotFound", true, ErrValidatorProposalNotFound{}},
		{CodeValidatorProposalApproved, 40278, "ValidatorProposalApproved", true, ErrValidatorProposalApproved{}},
		{CodeTooManyValidatorProposals, 40279, "TooManyValidatorProposals", true, ErrTooManyValidatorProposals{}},
	}
	if len(pinned) != len(Codes()) {
		t.Fatalf("%d codes pinned, the registry has %d: pin the new ones", len(pinned), len(Codes()))
	}
	for _, p := range pinned {
		if uint32(p.code) != p.want {
			t.Errorf("code %d renumbered to %d", p.want, p.code)
		}
		info, ok := p.code.Info()
		if !ok || info.Name != p.name || info.Paid != p.paid || p.code.Paid() != p.paid || info.Meaning == "" {
			t.Errorf("code %d: registry row %+v, want name %s, paid %v", p.want, info, p.name, p.paid)
		}
		if p.err == nil {
			continue
		}
		if p.err.Code() != p.code {
			t.Errorf("%T reports %d, want %d", p.err, p.err.Code(), p.code)
		}
		// CodeOf finds the code through wrapping.
		wrapped := fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", p.err))
		if got, ok := CodeOf(wrapped); !ok || got != p.code {
			t.Errorf("CodeOf(wrapped %T) = %d, %v", p.err, got, ok)
		}
	}
	if _, ok := CodeOf(fmt.Errorf("no code")); ok {
		t.Error("CodeOf found a code in an error that carries none")
	}
}

// codeTableMarkdown renders the registry as the table of docs/ERRORS.md.
func codeTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | name | paid | meaning |\n|---|---|---|---|\n")
	for _, r := range Codes() {
		paid := "unpaid"
		switch {
		case r.Code == CodeOK:
			paid = "-"
		case r.Paid:
			paid = "paid"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", r.Code, r.Name, paid, r.Meaning)
	}
	return b.String()
}

const (
	tableStart = "<!-- code table: generated from protocol/codes.go by `go test ./protocol -run TestErrorsDoc -update` -->\n"
	tableEnd   = "<!-- end of code table -->"
)

// TestErrorsDoc checks that docs/ERRORS.md holds the registry's table; -update
// rewrites it.
func TestErrorsDoc(t *testing.T) {
	const path = "../docs/ERRORS.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, tableStart), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/ERRORS.md has no generated code table between %q and %q", tableStart, tableEnd)
	}
	want := doc[:i+len(tableStart)] + codeTableMarkdown() + doc[j:]
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("docs/ERRORS.md's code table differs from the registry: run go test ./protocol -run TestErrorsDoc -update and review the diff")
	}
}

// TestCodeMeaningsQuoteLimits: every figure a meaning quotes from version.go is
// formatted from the limit, so that changing a limit changes the meaning (and
// TestErrorsDoc then asks for docs/ERRORS.md to be regenerated), and only the meanings
// that quote it; a figure quoted without naming a version holds in every version.
func TestCodeMeaningsQuoteLimits(t *testing.T) {
	every := limits[Latest]
	for _, v := range Supported() {
		l, err := LimitsFor(v)
		if err != nil {
			t.Fatal(err)
		}
		if l.MaxNonceGap != every.MaxNonceGap || l.MaxModerators != every.MaxModerators ||
			l.MaxIdentifierListLength != every.MaxIdentifierListLength || l.RestoreWindowMs != every.RestoreWindowMs {
			t.Errorf("version %d's limits differ from version %d's in a figure the meanings quote without naming a version: name the versions in codeRows", v, Latest)
		}
	}
	changes := []struct {
		change func(l13, l14, every *Limits)
		codes  []Code
		want   string
	}{
		{func(l13, _, _ *Limits) { l13.MaxTxBytes = 32 * 1024 }, []Code{CodeTxTooLarge}, "(32 KiB at 13)"},
		{func(l13, _, _ *Limits) { l13.MaxContractBytes = 10_000 }, []Code{CodeContractTooLarge}, "(10,000 bytes at 13)"},
		{func(l13, _, _ *Limits) { l13.MaxDocumentTypes = 101 }, []Code{CodeTooManyDocumentTypes}, "(101 at 13)"},
		{func(l13, _, _ *Limits) { l13.MaxPropertiesPerType = 102 }, []Code{CodeTooManyProperties}, "(102 at 13)"},
		{func(l13, _, _ *Limits) { l13.MaxIndexesPerType = 11 }, []Code{CodeTooManyIndexes}, "(11 at 13)"},
		{func(l13, _, _ *Limits) { l13.MaxIndexProperties = 12 }, []Code{CodeTooManyIndexProperties}, "(12 at 13)"},
		{func(_, l14, _ *Limits) { l14.MinDocumentTTLSeconds = 60 }, []Code{CodeInvalidContractStructure}, "outside 60..31,536,000 s"},
		{func(_, l14, _ *Limits) { l14.MaxDocumentTTLSeconds = 1_000_000 }, []Code{CodeInvalidContractStructure}, "outside 3,600..1,000,000 s"},
		{func(_, l14, _ *Limits) { l14.MaxTimeRangeOverlapFactor = 48 }, []Code{CodeInvalidContractStructure}, "whose overlap passes 48 "},
		{func(_, l14, _ *Limits) { l14.MaxTimeRangeTTLSeconds = 86_400 }, []Code{CodeInvalidContractStructure}, "past 86,400 s"},
		{func(_, _, every *Limits) { every.MaxModerators = 8 }, []Code{CodeInvalidContractStructure}, "more than 8 moderators"},
		{func(_, _, every *Limits) { every.MaxIdentifierListLength = 32 }, []Code{CodeInvalidContractStructure}, "an identifier list of more than 32 or indexed"},
		{func(_, _, every *Limits) { every.MaxNonceGap = 30 }, []Code{CodeInvalidIdentityNonce, CodeInvalidAddressNonce}, "or more than 30 above it"},
		{func(_, _, every *Limits) { every.RestoreWindowMs = 3_600_000 }, []Code{CodeRestoreWindowPassed}, "comes 3,600 s or more"},
	}
	for _, c := range changes {
		l13, l14, every := limits[V13], limits[V14], limits[Latest]
		c.change(&l13, &l14, &every)
		rows := codeRows(l13, l14, every)
		for i, r := range rows {
			quotes := slices.Contains(c.codes, r.Code)
			if changed := r.Meaning != codeTable[i].Meaning; changed != quotes {
				t.Errorf("%s: meaning changed %v with a limit it quotes %v: %q", r.Name, changed, quotes, r.Meaning)
			}
			if quotes && !strings.Contains(r.Meaning, c.want) {
				t.Errorf("%s: %q does not quote the changed limit as %q", r.Name, r.Meaning, c.want)
			}
		}
	}
}
