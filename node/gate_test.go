package node

import (
	"context"
	"reflect"
	"testing"

	abcicli "github.com/cometbft/cometbft/abci/client"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/proxy"
)

// signalOf is the channel of a signal of g's (&g.draining, &g.parking).
func (g *gate) signalOf(ch *chan struct{}) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return signal(ch)
}

// heldApp holds FinalizeBlock until release is closed, after saying so on entered.
type heldApp struct {
	abcitypes.BaseApplication
	entered, release chan struct{}
}

func (a heldApp) FinalizeBlock(context.Context, *abcitypes.RequestFinalizeBlock) (*abcitypes.ResponseFinalizeBlock, error) {
	close(a.entered)
	<-a.release
	return &abcitypes.ResponseFinalizeBlock{AppHash: []byte("held")}, nil
}

// TestGateApplicationCalls: a call of CometBFT's to the application in flight when the
// node closes its storage finishes before the close goes on (the close would otherwise
// close the store under it); every call after the close waits for good instead of
// reaching a closed store.
func TestGateApplicationCalls(t *testing.T) {
	app := heldApp{entered: make(chan struct{}), release: make(chan struct{})}
	dbs := &cometDBs{}
	client, err := gatedClients{ClientCreator: proxy.NewLocalClientCreator(app), g: &dbs.gate}.NewABCIClient()
	if err != nil {
		t.Fatal(err)
	}
	finalized := make(chan *abcitypes.ResponseFinalizeBlock, 1)
	go func() {
		res, err := client.FinalizeBlock(context.Background(), &abcitypes.RequestFinalizeBlock{Height: 1})
		if err != nil {
			t.Error(err)
		}
		finalized <- res
	}()
	<-app.entered
	closed := make(chan error, 1)
	go func() { closed <- dbs.closeRest() }()
	select {
	case <-dbs.gate.signalOf(&dbs.gate.draining):
	case err := <-closed:
		t.Fatalf("the close returned (%v) while FinalizeBlock ran", err)
	}
	close(app.release)
	if res := <-finalized; res == nil || string(res.AppHash) != "held" {
		t.Fatalf("FinalizeBlock in flight answered %v", res)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}

	for _, m := range applicationCalls() {
		parked := dbs.gate.signalOf(&dbs.gate.parking)
		returned := make(chan struct{})
		go func() {
			m.call(client)
			close(returned)
		}()
		select {
		case <-parked:
		case <-returned:
			t.Errorf("%s after the close returned", m.name)
		}
	}
}

type applicationCall struct {
	name string
	call func(abcicli.Client)
}

// applicationCalls calls, by reflection, every method of a client that reaches the
// application: the methods of abcitypes.Application, Echo, Flush and CheckTxAsync, with
// zero requests.
func applicationCalls() []applicationCall {
	names := []string{"Echo", "Flush", "CheckTxAsync"}
	app := reflect.TypeFor[abcitypes.Application]()
	for i := range app.NumMethod() {
		names = append(names, app.Method(i).Name)
	}
	var calls []applicationCall
	for _, name := range names {
		calls = append(calls, applicationCall{name: name, call: func(c abcicli.Client) {
			m := reflect.ValueOf(c).MethodByName(name)
			args := []reflect.Value{reflect.ValueOf(context.Background())}
			for j := 1; j < m.Type().NumIn(); j++ {
				args = append(args, reflect.Zero(m.Type().In(j)))
			}
			m.Call(args)
		}})
	}
	return calls
}
