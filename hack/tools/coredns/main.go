// Command coredns is the local cluster's DNS server: CoreDNS with only the plugins the real node
// needs (the cluster domain from the API server, health and readiness endpoints, error logs).
// A smaller plugin set than upstream's default build keeps the cold build short.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// The order in which a query passes the plugins of a server block.
	dnsserver.Directives = []string{"bind", "errors", "health", "ready", "kubernetes"}
}

func main() { coremain.Run() }
