// kube-router's network policy controller alone, for the local cluster (scripts/infra/kube/run.sh):
// it enforces NetworkPolicies with iptables (iptables-nft here) and ipsets beside the bridge CNI
// plugin and kube-proxy. The release's main also builds its BGP router, its IPVS service proxy and
// their clients (929 packages against 428), which this cluster does not run.
//
// It takes kube-router's own flags; --run-router and --run-service-proxy must be false, since only
// the firewall is here. On SIGTERM or SIGINT it stops syncing and removes every chain, rule and
// ipset it made (the controller's own Cleanup), so the host's filter table is as before it started;
// scripts/infra/kube/host.sh removes them too should it die without.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cloudnativelabs/kube-router/v2/pkg/controllers/netpol"
	"github.com/cloudnativelabs/kube-router/v2/pkg/healthcheck"
	"github.com/cloudnativelabs/kube-router/v2/pkg/options"
	"github.com/spf13/pflag"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "kube-router: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	klog.InitFlags(nil)
	config := options.NewKubeRouterConfig()
	config.AddFlags(pflag.CommandLine)
	pflag.Parse()
	if err := flag.Set("logtostderr", "true"); err != nil {
		return err
	}
	if err := flag.Set("v", config.VLevel); err != nil {
		return err
	}
	if !config.RunFirewall || config.RunRouter || config.RunServiceProxy || config.RunLoadBalancer {
		return errors.New("only the firewall is built in: pass --run-firewall=true --run-router=false --run-service-proxy=false")
	}
	if config.Kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	restConfig, err := clientcmd.BuildConfigFromFlags(config.Master, config.Kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}

	stop := make(chan struct{})
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	namespaces := factory.Core().V1().Namespaces().Informer()
	policies := factory.Networking().V1().NetworkPolicies().Informer()
	factory.Start(stop)
	synced := make(chan struct{})
	go func() { factory.WaitForCacheSync(stop); close(synced) }()
	select {
	case <-synced:
	case <-time.After(config.CacheSyncTimeout):
		close(stop)
		return fmt.Errorf("informers not synced after %s", config.CacheSyncTimeout)
	}

	iptablesHandlers, ipsetHandlers, err := netpol.NewIPTablesHandlers(config)
	if err != nil {
		close(stop)
		return err
	}
	var ipsetMutex sync.Mutex
	npc, err := netpol.NewNetworkPolicyController(client, config, pods, policies, namespaces,
		&ipsetMutex, iptablesHandlers, ipsetHandlers)
	if err != nil {
		close(stop)
		return err
	}
	if _, err := pods.AddEventHandler(npc.PodEventHandler); err != nil {
		close(stop)
		return err
	}
	if _, err := namespaces.AddEventHandler(npc.NamespaceEventHandler); err != nil {
		close(stop)
		return err
	}
	if _, err := policies.AddEventHandler(npc.NetworkPolicyEventHandler); err != nil {
		close(stop)
		return err
	}

	// The controller reports each sync here; nothing serves a health endpoint (--health-port=0),
	// so the reports are only drained.
	heartbeats := make(chan *healthcheck.ControllerHeartbeat, 10)
	go func() {
		for range heartbeats {
		}
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go npc.Run(heartbeats, stop, &wg)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	sig := <-signals
	klog.Infof("%s: stopping, then removing the network policy chains and ipsets", sig)
	close(stop)
	wg.Wait()
	// A controller of its own for the cleanup: Cleanup saves the filter table into the
	// controller's buffer without emptying it first, so on the one that synced it would restore
	// every other rule of the table (kubelet's, anyone's) twice.
	cleaner, err := netpol.NewNetworkPolicyController(client, config, pods, policies, namespaces,
		&ipsetMutex, iptablesHandlers, ipsetHandlers)
	if err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	cleaner.Cleanup()
	return nil
}
