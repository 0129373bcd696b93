// Command coredns is CoreDNS with only the plugins the real node's Corefile uses
// (hack/real-node.sh): the stock build compiles in every plugin, which is most of its build time.
package main

import (
	"fmt"
	"os"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	// The plugins, each registering itself with the server type; the directives below list them
	// in CoreDNS's own execution order (its plugin.cfg).
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	if err := dnsserver.SetDirectives([]string{
		"ready", "health", "errors", "log", "loadbalance", "cache", "kubernetes", "forward",
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	coremain.Run()
}
