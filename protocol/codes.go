package protocol

import (
	"fmt"
	"math/big"

	"github.com/dustin/go-humanize"
)

// Code is a stable consensus error code. It goes into the transaction result; the
// readable message goes into the log only. Codes are never renumbered or reused.
type Code uint32

// The codes. The five-digit groups follow the platform: 1xxxx basic (decoding and
// structure), 2xxxx signature and signer, 3xxxx fee, 4xxxx state. Each has its row in
// codeTable, which is the one place its name, paid flag and meaning are written.
const (
	CodeOK Code = 0

	CodeTxDecode              Code = 10001
	CodeTxTooLarge            Code = 10002
	CodeUnsupportedTxFormat   Code = 10003
	CodeUnknownTransitionType Code = 10004
	CodeInvalidTransition     Code = 10005
	CodeInvalidVersionSignal  Code = 10006

	// Contract definitions (ParseDocumentTypes). 10101, 10201 and 10231 are the
	// platform's; 10240 on are ours.
	CodeJSONSchema                Code = 10101
	CodeDuplicateIndex            Code = 10201
	CodeInvalidContractStructure  Code = 10231
	CodeUndefinedIndexProperty    Code = 10240
	CodeInvalidSummableProperty   Code = 10241
	CodeTooManyDocumentTypes      Code = 10242
	CodeTooManyProperties         Code = 10243
	CodeTooManyIndexes            Code = 10244
	CodeTooManyIndexProperties    Code = 10245
	CodeContractTooLarge          Code = 10246
	CodeInvalidName               Code = 10247
	CodeInvalidPropertyPosition   Code = 10248
	CodeDuplicateIndexName        Code = 10249
	CodeContractDecode            Code = 10250
	CodeContestedIndexUnsupported Code = 10251
	CodeDocumentDecode            Code = 10260

	CodeIdentityNotFound Code = 20000
	CodeMissingPublicKey Code = 20001
	CodeInvalidSignature Code = 20002
	CodeAddressNotFound  Code = 20010

	CodeBalanceIsNotEnough Code = 30000
	CodeMaxFeeNotCovered   Code = 30001

	CodeDataContractAlreadyPresent Code = 40000

	CodeInvalidIdentityNonce        Code = 40204
	CodeIdentityInsufficientBalance Code = 40210
	CodeRecipientIdentityNotFound   Code = 40211
	CodeDocumentTypeUpdate          Code = 40212
	CodeInvalidAddressNonce         Code = 40220
	CodeAddressInsufficientBalance  Code = 40221
	CodeCreditOverflow              Code = 40230

	// Contract transitions against state; 40000 is the platform's, 40240 on are ours.
	CodeDataContractNotFound       Code = 40240
	CodeDataContractOwnerMismatch  Code = 40241
	CodeInvalidDataContractVersion Code = 40242
	CodeContractConfigUpdate       Code = 40243
	CodeModeratorNotFound          Code = 40244
	CodeInvalidReference           Code = 40245

	// Documents batch actions against state; 40100 to 40109 are the platform's, 40250
	// on are ours.
	CodeDocumentAlreadyPresent          Code = 40100
	CodeDocumentNotFound                Code = 40101
	CodeDocumentOwnerIDMismatch         Code = 40102
	CodeDuplicateUniqueIndex            Code = 40105
	CodeInvalidDocumentRevision         Code = 40106
	CodeDocumentNotForSale              Code = 40108
	CodeDocumentIncorrectPurchasePrice  Code = 40109
	CodeReferencedDocumentTypeDeletable Code = 40122
	CodeDocumentExpired                 Code = 40140
	CodeDocumentTypeNotFound            Code = 40250
	CodeInvalidDocument                 Code = 40251
	CodeDocumentActionNotAllowed        Code = 40252
	CodeDocumentTypeUnsupported         Code = 40253
	CodeReferencedDocumentNotFound      Code = 40254
	CodeNotAModerator                   Code = 40255
	CodeModerationWindowPassed          Code = 40256
	CodeRemovalRecordNotFound           Code = 40257
	CodeRestoreWindowPassed             Code = 40258
	CodeRestoredDocumentMismatch        Code = 40259

	// The validator set's transitions against state (version 16 on), ours.
	CodeNotAValidatorOperator      Code = 40270
	CodeValidatorNotFound          Code = 40271
	CodeValidatorAlreadyPresent    Code = 40272
	CodeValidatorPowerMoveTooLarge Code = 40273
	CodeValidatorSetWouldBeEmpty   Code = 40274
	CodeTooManyValidators          Code = 40275
	CodeInvalidValidatorOperator   Code = 40276
	CodeValidatorProposalNotFound  Code = 40277
	CodeValidatorProposalApproved  Code = 40278
	CodeTooManyValidatorProposals  Code = 40279
)

// CodeInfo is one row of the code registry.
type CodeInfo struct {
	Code Code
	// Name is the code's name in logs, scenarios and docs/ERRORS.md.
	Name string
	// Paid: a refusal with this code still charges the signer its processing fee and
	// consumes its nonce. Only refusals found after the signer is authenticated, its
	// nonce accepted and its fee affordable are paid: anything earlier changes nothing,
	// so a replayed or forged transition can never drain anyone.
	Paid bool
	// Meaning says when the code is given.
	Meaning string
}

// codeTable is the registry: docs/ERRORS.md is generated from it and codes_test.go pins
// it. A meaning quotes no limit by hand, so that docs/ERRORS.md follows version.go.
var codeTable = codeRows(limits[V13], limits[V14], limits[Latest])

// codeRows writes the registry with the figures the meanings quote taken from limits:
// a meaning that names version 13 or 14 quotes l13 or l14, and one that names no
// version quotes every, whose quoted fields TestCodeMeaningsQuoteLimits checks are the
// same in every supported version.
func codeRows(l13, l14, every Limits) []CodeInfo {
	return []CodeInfo{
		{CodeOK, "OK", false, "accepted"},
		{CodeTxDecode, "TxDecode", false, fmt.Sprintf("the bytes are not a transition of the wire format (truncated, trailing bytes, an action kind the version does not know: renew before %d)", V15)},
		{CodeTxTooLarge, "TxTooLarge", false, fmt.Sprintf("the transaction exceeds the protocol version's size limit (%s at %d)", kib(l13.MaxTxBytes), V13)},
		{CodeUnsupportedTxFormat, "UnsupportedTxFormat", false, fmt.Sprintf("the leading format byte is not %d", TxFormat1)},
		{CodeUnknownTransitionType, "UnknownTransitionType", false, "the type byte names no transition"},
		{CodeInvalidTransition, "InvalidTransition", false, "a structure rule: zero amount, transfer to oneself, no or repeated identity keys"},
		{CodeInvalidVersionSignal, "InvalidVersionSignal", false, "a proposer's version signal (docs/STATE.md, Protocol upgrades) that is not its block's first transaction, is malformed, or names a version at or below the one in force; and any signal sent to the mempool, since only a proposer adds one"},
		{CodeJSONSchema, "JsonSchemaError", false, fmt.Sprintf("the contract is not JSON or its protocol version's meta-schema refuses it: an unknown keyword (ttl before version %d), a wrong shape, type number, a bound outside the meta-schema's range, an integer written with a fraction or exponent", V14)},
		{CodeDuplicateIndex, "DuplicateIndex", false, "two indices of a document type have the same properties in the same order"},
		{CodeInvalidContractStructure, "InvalidContractStructure", false, fmt.Sprintf("a contract rule the meta-schema cannot state: "+
			"bounds out of order or past the version's limits, a pattern that is no RE2 expression, a required name that is no property, an identifier not of %d bytes, an indexed string or byte array without a small enough maximum; "+
			"a ttl (version %d) without $createdAt in required, with documentsKeepHistory, indexOnly or a contested index, or, on registration and update, outside %s..%s s; "+
			"a time-range index (version %[2]d) whose range is no multiple of its step, whose overlap passes %[5]d or phase reaches its step, whose ttl is below its range or past %[6]s s or differs from another index's on the same grid, unique off a range == step grid on $createdAt, or ranked without countable or a timeRange; "+
			"moderatorAbilities without the contract's moderation block or beside documentsKeepHistory or indexOnly, more than %[7]d moderators; "+
			"a refersTo the referring type alone refuses (listElement off an identifier list's items, a list item that refers otherwise, a lookup from a list item, a reference by id from no identifier); "+
			"an identifier list of more than %[8]d or indexed",
			IdentityIDLen, V14, grouped(l14.MinDocumentTTLSeconds), grouped(l14.MaxDocumentTTLSeconds),
			l14.MaxTimeRangeOverlapFactor, grouped(l14.MaxTimeRangeTTLSeconds), every.MaxModerators, every.MaxIdentifierListLength)},
		{CodeUndefinedIndexProperty, "UndefinedIndexProperty", false, "an index uses a property the document type does not define and that is no indexable system field"},
		{CodeInvalidSummableProperty, "InvalidSummableProperty", false, "an index's summable names no integer property of the document type"},
		{CodeTooManyDocumentTypes, "TooManyDocumentTypes", false, fmt.Sprintf("the contract defines more document types than the version allows (%d at %d)", l13.MaxDocumentTypes, V13)},
		{CodeTooManyProperties, "TooManyProperties", false, fmt.Sprintf("a document type defines more properties than the version allows (%d at %d)", l13.MaxPropertiesPerType, V13)},
		{CodeTooManyIndexes, "TooManyIndexes", false, fmt.Sprintf("a document type defines more indices than the version allows (%d at %d)", l13.MaxIndexesPerType, V13)},
		{CodeTooManyIndexProperties, "TooManyIndexProperties", false, fmt.Sprintf("an index has more properties than the version allows (%d at %d)", l13.MaxIndexProperties, V13)},
		{CodeContractTooLarge, "ContractTooLarge", false, fmt.Sprintf("the contract JSON, as sent or in canonical form, exceeds the version's limit (%s at %d)", kib(l13.MaxContractBytes), V13)},
		{CodeInvalidName, "InvalidName", false, fmt.Sprintf("a document type, property or index name is not 1 to %d letters, digits, '-' or '_' starting with a letter", MaxNameLength)},
		{CodeInvalidPropertyPosition, "InvalidPropertyPosition", false, "a document type's property positions do not run 0, 1, ... without gaps or repeats"},
		{CodeDuplicateIndexName, "DuplicateIndexName", false, "two indices of a document type share a name"},
		{CodeContractDecode, "ContractDecode", false, "the bytes are not a contract encoding (format byte, id, owner, version, canonical JSON)"},
		{CodeContestedIndexUnsupported, "ContestedIndexUnsupported", false, fmt.Sprintf("a contract registration or update declares a contested index: contested values are resolved by a vote this version does not hold (a ttl beside a contested index is %d first)", CodeInvalidContractStructure)},
		{CodeDocumentDecode, "DocumentDecode", false, "stored bytes are not a document encoding of their type (only a damaged store gives it)"},
		{CodeIdentityNotFound, "IdentityNotFound", false, "the signing identity does not exist"},
		{CodeMissingPublicKey, "MissingPublicKey", false, "the signing identity has no key at the given index"},
		{CodeInvalidSignature, "InvalidSignature", false, "the signature does not verify over the sign bytes (wrong key, chain or type)"},
		{CodeAddressNotFound, "AddressNotFound", false, "the signing address holds nothing"},
		{CodeBalanceIsNotEnough, "BalanceIsNotEnough", false, "the payer cannot pay the processing fee"},
		{CodeMaxFeeNotCovered, "MaxFeeNotCovered", false, "CheckTx only, never in a block: the payer's balance covers the amount and the fee at the next block's earliest time, but not the amount and the largest fee a later block may charge (the dry run's max_fee, with what the payer's other pending transactions reserve): the node does not accept a transaction its block may refuse for want of credits"},
		{CodeDataContractAlreadyPresent, "DataContractAlreadyPresentError", true, "a contract create's id (from its owner and nonce) names a stored contract"},
		{CodeInvalidIdentityNonce, "InvalidIdentityNonce", false, fmt.Sprintf("the identity's nonce is used already, more than %d below its highest, or more than %d above it", NonceWindow, every.MaxNonceGap)},
		{CodeIdentityInsufficientBalance, "IdentityInsufficientBalance", true, "the identity can pay the processing of its authentication but not the amount and the transition's full fee (storage included) as well"},
		{CodeRecipientIdentityNotFound, "RecipientIdentityNotFound", true, "a top-up or credit transfer names an identity that does not exist"},
		{CodeDocumentTypeUpdate, "DocumentTypeUpdateError", true, "a contract update removes or changes an existing document type: a flag, an index, required, a property, its ttl (added, removed or changed), or adds a required property"},
		{CodeInvalidAddressNonce, "InvalidAddressNonce", false, fmt.Sprintf("the address's nonce is used already, more than %d below its highest, or more than %d above it", NonceWindow, every.MaxNonceGap)},
		{CodeAddressInsufficientBalance, "AddressInsufficientBalance", true, "the address can pay the fee but not the amount as well"},
		{CodeCreditOverflow, "CreditOverflow", false, "a credit would take a balance or a fee sum past 2^64-1; impossible while credits are conserved, refused so that no state can make a block fail"},
		{CodeDataContractNotFound, "DataContractNotFound", true, "a contract update names no stored contract"},
		{CodeDataContractOwnerMismatch, "DataContractOwnerMismatch", true, "a contract update is signed by another identity than the contract's owner"},
		{CodeInvalidDataContractVersion, "InvalidDataContractVersion", true, "a contract update's version is not the stored version plus one"},
		{CodeContractConfigUpdate, "ContractConfigUpdate", true, "a contract update adds, changes or removes the contract's config.moderation block, which is fixed at registration"},
		{CodeModeratorNotFound, "ModeratorNotFound", true, "a contract registration's moderation block names an identity that does not exist"},
		{CodeInvalidReference, "InvalidReference", true, "a refersTo names a contract or document type that does not exist, an indexOnly type, or a lookup index that is no unique index of one property of the referring property's type; a permanent reference by lookup of a value the target's writes can change"},
		{CodeReferencedDocumentTypeDeletable, "ReferencedDocumentTypeDeletableError", true, "a permanentDocument or listElement reference, a lookup one included, targets a type whose documents can disappear: canBeDeleted, moderatorAbilities.delete or a ttl (documents_can_disappear)"},
		{CodeDocumentAlreadyPresent, "DocumentAlreadyPresent", true, "a document create's id (from contract, owner, type and entropy) names a stored document"},
		{CodeDocumentNotFound, "DocumentNotFound", true, "a replace, delete, transfer, purchase, price update or renewal names no stored document of the type"},
		{CodeDocumentOwnerIDMismatch, "DocumentOwnerIdMismatch", true, "a replace, delete, transfer, price update or renewal is signed by another identity than the document's owner"},
		{CodeDuplicateUniqueIndex, "DuplicateUniqueIndex", true, "a create or replace gives a unique index values another document holds"},
		{CodeInvalidDocumentRevision, "InvalidDocumentRevision", true, "a replace, transfer, purchase, price update or renewal carries another revision than the stored one plus one"},
		{CodeDocumentNotForSale, "DocumentNotForSale", true, "a purchase of a document whose price is not set"},
		{CodeDocumentIncorrectPurchasePrice, "DocumentIncorrectPurchasePrice", true, "a purchase offers another price than the document's"},
		{CodeDocumentExpired, "DocumentExpiredError", true, fmt.Sprintf("a replace, transfer, purchase, price update or renewal of a document of a type with a ttl at or past its expiry ($renewedAt plus the ttl, $createdAt until renewed), whether or not the cleanup has deleted it yet (protocol version %d)", V14)},
		{CodeDocumentTypeNotFound, "DocumentTypeNotFound", true, "a documents batch names a document type its contract does not define"},
		{CodeInvalidDocument, "InvalidDocument", true, "document data its type refuses: not a JSON object, a wrong type, a missing required or an unknown property, a string or byte array too long or short, a pattern or integer bound broken, a number that is not an integer"},
		{CodeDocumentActionNotAllowed, "DocumentActionNotAllowed", true, "the type's flags forbid the action (documentsMutable, canBeDeleted, transferable, tradeMode, creationRestrictionMode, moderatorAbilities.delete; a renewal: no ttl), or it buys one's own document or transfers it to its owner"},
		{CodeDocumentTypeUnsupported, "DocumentTypeUnsupported", true, "documents of the type use a feature the contract may declare but this version does not carry out yet (indexOnly, a contested index)"},
		{CodeReferencedDocumentNotFound, "ReferencedDocumentNotFound", true, "a create, replace or restore sets a reference to a document that is not stored (by id, or by the lookup index's value); a document past its expiry that the cleanup has not deleted yet is still stored"},
		{CodeNotAModerator, "NotAModerator", true, "a moderator's deletion or restore is signed by an identity that is neither the contract's owner nor one of its moderators"},
		{CodeModerationWindowPassed, "ModerationWindowPassed", true, "a moderator's deletion comes more than the type's moderatorAbilities.deleteWithin seconds after the document's $updatedAt"},
		{CodeRemovalRecordNotFound, "RemovalRecordNotFound", true, "a restore names a document that no removal record keeps (never removed by a moderator, removed without a record, or restored already)"},
		{CodeRestoreWindowPassed, "RestoreWindowPassed", true, fmt.Sprintf("a restore comes %s s or more after the moderator's deletion", grouped(every.RestoreWindowMs/1000))},
		{CodeRestoredDocumentMismatch, "RestoredDocumentMismatch", true, "the document a restore carries does not decode as a document of the type with the action's id, or its hash is not the removal record's"},
		{CodeNotAValidatorOperator, "NotAValidatorOperator", true, fmt.Sprintf("a validator set proposal or approval (version %d) is signed by an identity that operates no validator of the current set", V16)},
		{CodeValidatorNotFound, "ValidatorNotFound", true, "a proposal changes, rotates or removes a validator that is not in the current set"},
		{CodeValidatorAlreadyPresent, "ValidatorAlreadyPresent", true, "a proposal adds, or rotates to, a consensus key whose address is in the current set"},
		{CodeValidatorPowerMoveTooLarge, "ValidatorPowerMoveTooLarge", true, "a proposal would move a third of the current set's power or more in one step (an add its power, a power change the difference, a rotation or removal the validator's power)"},
		{CodeValidatorSetWouldBeEmpty, "ValidatorSetWouldBeEmpty", true, "a proposal removes the last validator of the set"},
		{CodeTooManyValidators, "TooManyValidators", true, "a proposal adds a validator to a set that holds the version's most (MaxValidators, docs/STATE.md)"},
		{CodeInvalidValidatorOperator, "InvalidValidatorOperator", true, "a proposal adds a validator whose operator identity does not exist or operates a validator of the current set already"},
		{CodeValidatorProposalNotFound, "ValidatorProposalNotFound", true, "an approval names no pending proposal (never made, passed and applied, or expired)"},
		{CodeValidatorProposalApproved, "ValidatorProposalApproved", true, "an approval of a proposal the validator approved already, or that has passed"},
		{CodeTooManyValidatorProposals, "TooManyValidatorProposals", true, "a validator's operator has the version's most proposals pending already (MaxValidatorProposals, docs/STATE.md)"},
	}
}

// kib writes a size in bytes as the meanings quote it: in KiB when it is a whole number
// of them.
func kib(n int) string {
	if n%1024 != 0 {
		return grouped(uint64(n)) + " bytes"
	}
	return fmt.Sprintf("%d KiB", n/1024)
}

// grouped writes n with commas between groups of three digits: 31,536,000.
func grouped(n uint64) string { return humanize.BigComma(new(big.Int).SetUint64(n)) }

// codeIndex finds a code's row; built once from codeTable.
var codeIndex = func() map[Code]int {
	m := make(map[Code]int, len(codeTable))
	for i, r := range codeTable {
		if _, dup := m[r.Code]; dup {
			panic(fmt.Sprintf("protocol: code %d listed twice", r.Code))
		}
		m[r.Code] = i
	}
	return m
}()

// Codes returns the registry, in table order.
func Codes() []CodeInfo { return append([]CodeInfo(nil), codeTable...) }

// Info returns the row of c; ok is false for a code this build does not know.
func (c Code) Info() (CodeInfo, bool) {
	i, ok := codeIndex[c]
	if !ok {
		return CodeInfo{}, false
	}
	return codeTable[i], true
}

// Paid reports whether a refusal with this code still charges the signer its
// processing fee and consumes its nonce (CodeInfo.Paid).
func (c Code) Paid() bool {
	r, _ := c.Info()
	return r.Paid
}

// String is the code's registered name, or its number.
func (c Code) String() string {
	if r, ok := c.Info(); ok {
		return r.Name
	}
	return fmt.Sprintf("Code(%d)", uint32(c))
}
