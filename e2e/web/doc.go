// Package web drives the node's web view in headless Chromium (Debian's chromium; make
// e2e-web installs it when it is missing) against a real in-process node: it loads each
// page, reads from the DOM the figures the chain holds and compares them, and saves a
// screenshot of each page (into TTLD_SCREENSHOTS when set, as make web-screenshots does
// for the README). The test carries the build tag "web", so that `go test ./...` needs
// no browser.
package web
