// Package ports picks loopback ports for the nodes that tests start, for a listener a
// test cannot open itself (CometBFT binds its RPC and P2P addresses from its
// configuration, and advertises the P2P one to its peers, so port 0 will not do).
//
// A port the kernel chose for a listener on port 0 and that the listener released
// comes from the ephemeral range, where every outgoing connection also takes its local
// port: under the load of a parallel test run, a client's connection can take it
// between its choice and the node's bind ("address already in use"). Ports here are
// chosen below that range (net.ipv4.ip_local_port_range on Linux), where only a
// listener binds, and below the host ports the devnets bind by number; each is probed
// by listening on it, and a process never hands out the same port twice, so parallel
// tests in one package never share one and a node restarted on its ports finds them
// free.
package ports
