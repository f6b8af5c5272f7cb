package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestBatchFieldsAreTheCommandsFlags: a batch file's action takes the fields the
// command of its kind takes, and no other: its arguments (CONTRACT TYPE, ID, DATA, as
// the command's usage names them) and its flags, but the signer's and --save, which
// belong to the command line.
func TestBatchFieldsAreTheCommandsFlags(t *testing.T) {
	root := newRootCmd()
	group, _, err := root.Find([]string{"tx", "document"})
	if err != nil {
		t.Fatal(err)
	}
	commands := 0
	for _, cmd := range group.Commands() {
		k, err := documentKindNamed(cmd.Name())
		if err != nil {
			continue
		}
		commands++
		var fields []string
		for _, arg := range strings.Fields(cmd.Use)[1:] {
			if strings.HasPrefix(arg, "-") || strings.HasPrefix(arg, "[") {
				break
			}
			if arg != "CONTRACT" && arg != "TYPE" {
				fields = append(fields, strings.ToLower(arg))
			}
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "identity" && f.Name != "key-index" && f.Name != "save" {
				fields = append(fields, f.Name)
			}
		})
		slices.Sort(fields)
		takes := slices.Sorted(slices.Values(k.Takes))
		if !slices.Equal(fields, takes) {
			t.Errorf("ttld tx document %s takes %v, its batch action %v", k.Name, fields, takes)
		}
	}
	if commands != len(documentKinds) {
		t.Errorf("%d commands under tx document have a kind, want one for each of the %d kinds", commands, len(documentKinds))
	}
}
