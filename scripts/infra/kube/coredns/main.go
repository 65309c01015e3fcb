// CoreDNS with only the plugins the local cluster's Corefile uses (scripts/infra/kube/config.sh):
// the release's main imports every plugin, clouds' included, which costs minutes of compiling.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/kubernetes"
)

func init() {
	// The order CoreDNS's own list gives these plugins.
	dnsserver.Directives = []string{"bind", "errors", "cache", "kubernetes", "forward"}
}

func main() {
	coremain.Run()
}
