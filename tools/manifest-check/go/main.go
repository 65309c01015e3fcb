// Command manifest-check renders and validates the platform's deployment manifests the way the
// real tools do, and prints the result as JSON for the tests in ../src to reason about:
//
//	manifest-check kustomize <dir>          renders a kustomization (kustomize's own Go API),
//	                                        strictly decodes every object into its typed
//	                                        Kubernetes struct (unknown or mistyped fields fail),
//	                                        applies the API server's defaulting and validation
//	                                        (k8s.io/kubernetes/pkg/apis/.../validation)
//	manifest-check compose <file> [KEY=VAL] loads a Compose file with compose-go (the reference
//	                                        loader: schema validation against the Compose
//	                                        specification, interpolation, normalisation)
//	manifest-check dockerfile <file>        loads a Dockerfile with BuildKit's Dockerfile frontend
//	  [--target=STAGE] [KEY=VAL]            for a target and build arguments: the build checks
//	                                        of `docker build --check`, the arguments the target
//	                                        uses, the resulting image configuration (no build)
//
// Problems are reported in the JSON, not as the exit status: the exit status is non-zero only
// for a wrong invocation.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 3 {
		usage()
	}
	var result any
	switch os.Args[1] {
	case "kustomize":
		if len(os.Args) != 3 {
			usage()
		}
		result = checkKustomization(os.Args[2])
	case "compose":
		result = checkCompose(os.Args[2], os.Args[3:])
	case "dockerfile":
		result = checkDockerfile(os.Args[2], os.Args[3:])
	default:
		usage()
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(result); err != nil {
		fmt.Fprintf(os.Stderr, "manifest-check: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: manifest-check kustomize <dir>")
	fmt.Fprintln(os.Stderr, "       manifest-check compose <file> [KEY=VALUE...]")
	fmt.Fprintln(os.Stderr, "       manifest-check dockerfile <file> [--target=STAGE] [KEY=VALUE...]")
	os.Exit(2)
}
