// Package invariants checks the state the long way, for tests and the simulation: every
// key of the data contracts tree against the rules the document writes keep
// (CheckDocuments). It reads the tree through drive's key layout and decoders and is
// never linked into the node: what a node checks after every block (ttld start
// --check-invariants) is the running total of credits, in app and drive.
package invariants
