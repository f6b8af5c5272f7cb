package protocol

import (
	"os"
	"strings"
	"testing"
)

// everyEvent is one event of each type, built by its constructor with every optional
// attribute present.
func everyEvent() []Event {
	id, epoch := IdentityID{1}, uint32(3)
	hash := [32]byte{2}
	evs := []Event{
		TransitionEvent{Type: TypeAddressFundsTransfer, Signer: "a", Nonce: 1, Fee: FeeParts{Processing: 2}, Code: CodeOK}.Event(),
		NewTransferEvent("a", "b", 5),
		NewIdentityCreatedEvent(id, Address{1}, 5),
		NewDataContractEvent(EventDataContractCreated, ContractID{1}, id, 1),
		NewDataContractEvent(EventDataContractUpdated, ContractID{1}, id, 2),
		NewProtocolUpgradeEvent(V13, V14),
		EpochChangeEvent{Epoch: 4, LifetimeStorageSpread: 1, PreviousEpoch: &epoch}.Event(),
		NewTimeRangeSweepEvent(1, 1),
		NewEpochPaidEvent(3, 10, 9),
		NewEpochPayoutEvent(3, []byte{1}, id, 1, 9),
		NewAddressBalancesCompactedEvent(1, 64, 2, 5),
		NewAddressBalancesCleanupEvent(1, 0, 0),
		NewDocumentExpiredEvent(ContractID{1}, "note", DocumentID{1}, id, 5),
		NewDocumentExpirationOrphanEvent(DocumentID{1}, 5),
		NewDocumentsCleanupEvent(1, 0, 2, 0, 0),
		NewValidatorProposalEvent(1, ValidatorChange{Kind: ValidatorAdd, PubKey: make([]byte, 32), Power: 1}, ConsensusAddress{1}, 5),
		NewValidatorApprovalEvent(1, ConsensusAddress{1}, 10, 20, false),
		NewValidatorProposalExpiredEvent(1),
		NewValidatorProposalDroppedEvent(1, CodeValidatorNotFound),
		NewValidatorUpdateEvent(ConsensusAddress{1}, make([]byte, 32), 0, "proposal", 1),
		NewValidatorUpdateEvent(ConsensusAddress{1}, make([]byte, 32), 0, "misbehavior", 7),
		NewValidatorMisbehaviorEvent(ConsensusAddress{1}, MisbehaviorDuplicateVote, 7, true),
		NewBlockTransactionsEvent(3),
	}
	for _, k := range DocumentActionKinds() {
		a := DocumentActionEvent{Kind: k, Type: "note", DocumentHash: &hash}
		if k == ActionModerateDelete || k == ActionRestore {
			a.Moderator = &id
		}
		evs = append(evs, a.Event())
	}
	return evs
}

// TestEventsDoc: docs/TX.md's Events table has a row for every event type, listing
// every attribute its constructor writes.
func TestEventsDoc(t *testing.T) {
	raw, err := os.ReadFile("../docs/TX.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "\n## Events\n")
	if i < 0 {
		t.Fatal("docs/TX.md has no Events section")
	}
	section := doc[i+1:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		rows[strings.TrimSpace(cells[1])] = cells[2]
	}
	for _, ev := range everyEvent() {
		row, ok := rows["`"+ev.Type+"`"]
		if !ok && strings.HasPrefix(ev.Type, EventDocumentPrefix) {
			for name, r := range rows {
				if strings.Contains(name, "`"+ev.Type+"`") {
					row, ok = r, true
				}
			}
		}
		if !ok {
			t.Errorf("docs/TX.md has no row for the event %s", ev.Type)
			continue
		}
		for _, a := range ev.Attrs {
			if !strings.Contains(row, "`"+a.Key+"`") {
				t.Errorf("docs/TX.md's row of %s lacks its attribute %s", ev.Type, a.Key)
			}
		}
	}
}

// TestSearchedDoc: every searched attribute is one an event writes, and docs/TX.md's
// Events section names it among the indexed ones.
func TestSearchedDoc(t *testing.T) {
	raw, err := os.ReadFile("../docs/TX.md")
	if err != nil {
		t.Fatal(err)
	}
	written := map[SearchedAttr]bool{}
	for _, e := range everyEvent() {
		for _, a := range e.Attrs {
			written[SearchedAttr{e.Type, a.Key}] = true
		}
	}
	for _, s := range Searched {
		if !written[s] {
			t.Errorf("%s is searched but no event writes it", s.Query())
		}
		if !strings.Contains(string(raw), "`"+s.Query()+"`") {
			t.Errorf("docs/TX.md does not name the indexed attribute %s", s.Query())
		}
	}
}
