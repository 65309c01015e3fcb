// One binary for a single-node Kubernetes cluster: it runs the component named by its first
// argument (scripts/infra/kube.sh). One binary instead of seven shares the compiled packages, so
// the cold build takes minutes, not the better part of an hour, and the cache holds ~190 MB.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
	_ "time/tzdata"
)

const components = "kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl, etcd"

func main() {
	// Called as `cluster <component> args...` or through a link named after the component.
	name := filepath.Base(os.Args[0])
	if name == "cluster" || name == "cluster.tmp" {
		if len(os.Args) < 2 {
			fmt.Fprintf(os.Stderr, "usage: %s <component> [args...]; components: %s\n", name, components)
			os.Exit(2)
		}
		name = os.Args[1]
		os.Args = os.Args[1:]
	}
	switch name {
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "kube-scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kubelet":
		os.Exit(cli.Run(kubelet.NewKubeletCommand(context.Background())))
	case "kube-proxy":
		os.Exit(cli.Run(proxy.NewProxyCommand()))
	case "kubectl":
		if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
			util.CheckErr(err)
		}
	case "etcd":
		etcdmain.Main(os.Args)
	default:
		fmt.Fprintf(os.Stderr, "unknown component %q; components: %s\n", name, components)
		os.Exit(2)
	}
}
